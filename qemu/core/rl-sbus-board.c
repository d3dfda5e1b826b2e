/*
 * retrolink-sbus-board: the SBus front end of the board core (rl-sbus-board.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/irq.h"
#include "hw/loader.h"
#include "hw/qdev-properties.h"
#include "hw/sparc/sun4m_iommu.h"

#include "hw/retrolink/core/rl-sbus-board.h"

/* An SBus interrupt is a level: the causes the mask lets through. */
static void rl_sbus_board_irq(RlBoard *b, bool edge)
{
    RlSbusBoard *s = RL_SBUS_BOARD(b->dev);

    qemu_set_irq(s->irq, (b->irq_status & b->irq_mask) != 0);
}

static const RlBoardFront rl_sbus_board_front = {
    .irq = rl_sbus_board_irq,
};

static void rl_sbus_board_instance_init(Object *obj)
{
    RlSbusBoard *s = RL_SBUS_BOARD(obj);

    rl_board_init(&s->rl, RL_SBUS_BOARD_GET_CLASS(obj)->info, &rl_sbus_board_front, s);
    s->rl.big_endian = true;
    sysbus_init_irq(SYS_BUS_DEVICE(obj), &s->irq);
}

/* The FCode PROM: the file's bytes at offset 0 of a read-only region of the window. */
static bool rl_sbus_board_load_prom(RlSbusBoard *s, Error **errp)
{
    const char *name = s->rl.info->name;

    if (!s->prom_file) {
        error_setg(errp, "%s: prom (the card's FCode PROM image) is required", name);
        return false;
    }
    int64_t size = get_image_size(s->prom_file);
    if (size < 0) {
        error_setg(errp, "%s: prom %s: no such file, or not readable", name, s->prom_file);
        return false;
    }
    if (size == 0 || size > RL_SBUS_PROM_SIZE) {
        error_setg(errp, "%s: prom %s is %" PRId64 " bytes, not 1..%llu", name,
                   s->prom_file, size, RL_SBUS_PROM_SIZE);
        return false;
    }
    /* named by its slot: a RAM block's name is the machine's to keep unique, and a
     * system-bus device has no bus path to tell two cards' apart */
    g_autofree char *rom = g_strdup_printf("retrolink-sbus-prom.%u", s->slot);
    if (!memory_region_init_rom(&s->prom, OBJECT(s), rom, RL_SBUS_PROM_SIZE, errp)) {
        return false;
    }
    if (load_image_mr(s->prom_file, &s->prom) < 0) {
        error_setg(errp, "%s: prom %s could not be read", name, s->prom_file);
        return false;
    }
    return true;
}

/* Another card realized in this card's slot (object_child_foreach_recursive: nonzero). */
static int rl_sbus_board_same_slot(Object *obj, void *opaque)
{
    RlSbusBoard *s = opaque;
    RlSbusBoard *other = (RlSbusBoard *)object_dynamic_cast(obj, TYPE_RL_SBUS_BOARD);

    return other && other != s && DEVICE(other)->realized && other->slot == s->slot;
}

/*
 * Realize takes its steps in order and, when one fails, undoes the ones before it in
 * reverse (the object owns the memory regions).
 */
static void rl_sbus_board_realize(DeviceState *dev, Error **errp)
{
    RlSbusBoard *s = RL_SBUS_BOARD(dev);
    RlBoard *b = &s->rl;
    Object *iommu = object_resolve_path_type("", TYPE_SUN4M_IOMMU, NULL);

    if (!iommu) {
        error_setg(errp, "%s: an SBus card needs a sun4m machine (its IOMMU)", b->info->name);
        return;
    }
    b->dma_as = &SUN4M_IOMMU(iommu)->iommu_as;
    /* before the PROM: its RAM block is named by the slot */
    if (object_child_foreach_recursive(object_get_root(), rl_sbus_board_same_slot, s)) {
        error_setg(errp, "%s: slot %u is not a free SBus slot: another card has it (one "
                   "card each)", b->info->name, s->slot);
        return;
    }
    if (!rl_sbus_board_load_prom(s, errp)) {
        return;
    }
    if (!rl_board_realize(b, errp)) {
        return;
    }
    memory_region_init(&s->window, OBJECT(s), "retrolink-sbus-card", RL_SBUS_WINDOW_SIZE);
    memory_region_add_subregion(&s->window, 0, &s->prom);
    for (int i = 0; i < RL_BOARD_REGIONS; i++) {
        if (b->bar[i]) {
            memory_region_add_subregion(&s->window, RL_SBUS_REGION_OFFSET(i), b->bar[i]);
        }
    }
    sysbus_init_mmio(SYS_BUS_DEVICE(s), &s->window);
}

static void rl_sbus_board_unrealize(DeviceState *dev)
{
    rl_board_exit(rl_sbus_board(dev));
}

static void rl_sbus_board_reset(DeviceState *dev)
{
    rl_board_reset(rl_sbus_board(dev));
}

static const Property rl_sbus_board_properties[] = {
    DEFINE_PROP_STRING("fabric", RlSbusBoard, rl.fabric),
    DEFINE_PROP_UINT32("node", RlSbusBoard, rl.node, 0),
    DEFINE_PROP_UINT32("network", RlSbusBoard, rl.network, 0),
    DEFINE_PROP_STRING("prom", RlSbusBoard, prom_file),
    DEFINE_PROP_UINT32("slot", RlSbusBoard, slot, 0),
};

static void rl_sbus_board_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->realize = rl_sbus_board_realize;
    dc->unrealize = rl_sbus_board_unrealize;
    dc->user_creatable = true;
    device_class_set_legacy_reset(dc, rl_sbus_board_reset);
    device_class_set_props(dc, rl_sbus_board_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

void rl_sbus_board_class_set(ObjectClass *klass, const RlBoardInfo *info, uint32_t level,
                             const char *desc, const VMStateDescription *vmsd)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    assert(level >= RL_SBUS_LEVEL_MIN && level <= RL_SBUS_LEVEL_MAX);
    RL_SBUS_BOARD_CLASS(klass)->info = info;
    RL_SBUS_BOARD_CLASS(klass)->level = level;
    dc->desc = desc;
    dc->vmsd = vmsd;
}

static const TypeInfo rl_sbus_board_info = {
    .name = TYPE_RL_SBUS_BOARD,
    .parent = TYPE_SYS_BUS_DEVICE,
    .abstract = true,
    .instance_size = sizeof(RlSbusBoard),
    .instance_init = rl_sbus_board_instance_init,
    .class_size = sizeof(RlSbusBoardClass),
    .class_init = rl_sbus_board_class_init,
};

static void rl_sbus_board_register_types(void)
{
    type_register_static(&rl_sbus_board_info);
}

type_init(rl_sbus_board_register_types)
