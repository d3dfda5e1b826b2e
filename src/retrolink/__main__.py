from retrolink.cli import main

raise SystemExit(main())
