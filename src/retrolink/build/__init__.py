"""Building what a cluster needs: host packages, QEMU with our overlay, the guest
kernel, our own programs and modules (meson), the initramfs. pipeline.build_all runs it."""
