\ The PUMA-III FC adapter's SBus card (qemu/fc/fc-sbus.c): the FCode PROM at offset 0
\ of its slot. OpenBIOS runs it when it probes the slot (its probe-self-sbus, after the
\ first byte says FCode) and makes the card's node of it: the name Linux finds the
\ driver by, the reg the driver maps and the interrupts it requests, as a real SBus
\ card's PROM does. The values between @ signs are those of
\ include/retrolink/regs/fc-regs.h, put in by the build (src/retrolink/build/fcode.py)
\ before toke tokenizes this.
fcode-version2
hex

" @FC_SBUS_NAME@" device-name
" network" device-type

\ the control page, then the channel pages: (slot, offset, size) each
my-address @FC_SBUS_CTRL_OFFSET@ + my-space encode-phys
@FC_CTRL_PAGE_SIZE@ encode-int encode+
my-address @FC_SBUS_CHAN_OFFSET@ + my-space encode-phys encode+
@FC_CHAN_PAGES_SIZE@ encode-int encode+
" reg" property

\ one interrupt, at its SBus level; "intr" is that level as the sun4m's processor
\ interrupt (0x30 | PIL, 0), which sparc32 Linux reads. A real card's FCode has OBP's
\ `intr` word make both; OpenBIOS has not that word, and its tcx.fs writes both itself.
@FC_SBUS_INTR@ encode-int 0 encode-int encode+ " intr" property
@FC_SBUS_LEVEL@ encode-int " interrupts" property

\ DVMA in SBus bursts of 1 to 32 bytes (bit n: 2^n bytes): our choice, a 20 MHz SBus
\ moving 61 MB/s (../shared/specs/puma-iii.md) bursts
3f encode-int " burst-sizes" property

end0
