"""Running a cluster: QEMU and fabric command lines (node_command, fabric_config),
the processes (cluster, runner), their output and failures (node_output, diagnosis),
interactive sessions (interactive) and guest addressing (guest_net)."""
