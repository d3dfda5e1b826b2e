/*
 * retrolink's SPARCstation 5 node: QEMU's SS-5 (hw/sparc/sun4m.c, unchanged) with what
 * a retrolink node needs mapped into free space of its on-board I/O area (docs/sparc.md):
 *
 * - the boot barrier (rl-barrier-sysbus.c), which the PC has at an ISA port;
 * - a second view of the machine's fw_cfg registers. sun4m puts fw_cfg at
 *   0xd_0000_0510, above 4 GiB in the 36-bit physical space, which a sparc32 Linux
 *   (32-bit phys_addr_t, ioremap in bus space 0) cannot reach; its qemu_fw_cfg driver
 *   is told this view instead (qemu_fw_cfg.mmio= on the kernel command line). The
 *   control register is big-endian, as on every memory-mapped fw_cfg.
 *
 * The addresses are the node command line's (src/retrolink/run/node_command.py).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "exec/address-spaces.h"
#include "hw/boards.h"
#include "hw/nvram/fw_cfg.h"
#include "hw/sysbus.h"
#include "qom/object.h"

#include "hw/retrolink/core/rl-barrier-sysbus.h"
#include "hw/retrolink/core/rl-sbus-board.h"
#include "system/system.h"

#define TYPE_RL_SUN4M_MACHINE MACHINE_TYPE_NAME("retrolink-SS-5")
#define RL_SUN4M_PARENT       MACHINE_TYPE_NAME("SS-5")

/*
 * Our choice: a page in the SS-5's on-board I/O area (0x71xxxxxx) that the machine
 * leaves unassigned, between the auxiliary registers (0x7191xxxx) and the counters
 * (0x71dxxxxx); mapped above any empty-slot filler
 */
#define RL_SUN4M_BARRIER_BASE 0x71a00000ULL
#define RL_SUN4M_FW_CFG_BASE  0x71a01000ULL

/*
 * The SS-5's SBus slots, as its PROM (OpenBIOS, drivers/sbus.c) sees them: slot n at
 * 0x20000000 + n * 256 MiB. Slots 0 to 2 are the SS-5's three SBus slots; 3 to 5 hold
 * its on-board devices (the framebuffer, audio, the I/O chip)
 */
#define RL_SUN4M_SBUS_BASE      0x20000000ULL
#define RL_SUN4M_SBUS_SLOT_SIZE 0x10000000ULL
#define RL_SUN4M_SBUS_CARD_SLOTS 3
/* the interrupt controller's input for SBus level L (hw/intc/slavio_intctl.c) */
#define RL_SUN4M_SBUS_IRQ(level) (6 + (level))

/* sun4m's own init, which ours wraps (the SS-5's class is private to sun4m.c) */
static void (*rl_sun4m_parent_init)(MachineState *machine);

static void rl_sun4m_fw_cfg_view(MachineState *machine)
{
    SysBusDevice *fw_cfg = SYS_BUS_DEVICE(fw_cfg_find());
    static const char *const names[] = { "rl-fw-cfg.ctl", "rl-fw-cfg.data" };
    hwaddr offset = 0;

    /* control then data, one after the other as sun4m maps them (data at +2) */
    for (int i = 0; i < ARRAY_SIZE(names); i++) {
        MemoryRegion *region = sysbus_mmio_get_region(fw_cfg, i);
        MemoryRegion *view = g_new(MemoryRegion, 1);

        memory_region_init_alias(view, OBJECT(machine), names[i], region, 0,
                                 memory_region_size(region));
        memory_region_add_subregion_overlap(get_system_memory(),
                                            RL_SUN4M_FW_CFG_BASE + offset, view, 1);
        offset += memory_region_size(region);
    }
}

/*
 * One SBus card given with -device: map it in its slot, wire its interrupt. A slot
 * another card has is refused by the card's realize (rl-sbus-board.c); the machine
 * checks that the slot is one of its own.
 */
static int rl_sun4m_plug_card(Object *obj, void *opaque)
{
    RlSbusBoard *card = (RlSbusBoard *)object_dynamic_cast(obj, TYPE_RL_SBUS_BOARD);
    DeviceState *intctl;
    qemu_irq irq;

    if (!card) {
        return 0;
    }
    if (card->slot >= RL_SUN4M_SBUS_CARD_SLOTS) {
        error_report("%s: slot %u is not a free SBus slot of the SS-5 (0..%d, one card "
                     "each)", card->rl.info->name, card->slot, RL_SUN4M_SBUS_CARD_SLOTS - 1);
        exit(1);
    }
    sysbus_mmio_map(SYS_BUS_DEVICE(card), 0,
                    RL_SUN4M_SBUS_BASE + card->slot * RL_SUN4M_SBUS_SLOT_SIZE);
    intctl = DEVICE(object_resolve_path_type("", "slavio_intctl", NULL));
    irq = qdev_get_gpio_in(intctl, RL_SUN4M_SBUS_IRQ(rl_sbus_board_level(card)));
    sysbus_connect_irq(SYS_BUS_DEVICE(card), 0, irq);
    return 0;
}

static void rl_sun4m_machine_done(Notifier *notifier, void *data)
{
    object_child_foreach_recursive(object_get_root(), rl_sun4m_plug_card, NULL);
}

static Notifier rl_sun4m_machine_done_notifier = {
    .notify = rl_sun4m_machine_done,
};

static void rl_sun4m_init(MachineState *machine)
{
    DeviceState *barrier;

    rl_sun4m_parent_init(machine);
    barrier = qdev_new(TYPE_RL_BARRIER_SYSBUS);
    object_property_add_child(OBJECT(machine), "retrolink-barrier", OBJECT(barrier));
    sysbus_realize_and_unref(SYS_BUS_DEVICE(barrier), &error_fatal);
    sysbus_mmio_map_overlap(SYS_BUS_DEVICE(barrier), 0, RL_SUN4M_BARRIER_BASE, 1);
    rl_sun4m_fw_cfg_view(machine);
    qemu_add_machine_init_done_notifier(&rl_sun4m_machine_done_notifier);
}

static void rl_sun4m_class_init(ObjectClass *oc, void *data)
{
    MachineClass *mc = MACHINE_CLASS(oc);

    rl_sun4m_parent_init = mc->init;
    mc->init = rl_sun4m_init;
    mc->desc = "retrolink node: Sun4m platform, SPARCstation 5, with the boot barrier";
    machine_class_allow_dynamic_sysbus_dev(mc, TYPE_RL_SBUS_BOARD);
    mc->is_default = false;
}

static const TypeInfo rl_sun4m_info = {
    .name       = TYPE_RL_SUN4M_MACHINE,
    .parent     = RL_SUN4M_PARENT,
    .class_init = rl_sun4m_class_init,
};

static void rl_sun4m_register_types(void)
{
    type_register_static(&rl_sun4m_info);
}

type_init(rl_sun4m_register_types)
