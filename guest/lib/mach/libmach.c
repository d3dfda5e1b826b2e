/* libmach: see mach.h and docs/boards/libmach.md. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "mach.h"

static int self_fd = -1;

task_t mach_task_self(void)
{
    if (self_fd < 0) {
        self_fd = open(MACH_DEVICE, O_RDWR | O_CLOEXEC);
    }
    return self_fd < 0 ? TASK_NULL : (task_t)self_fd;
}

task_t mach_task_create(void)
{
    int fd = open(MACH_DEVICE, O_RDWR | O_CLOEXEC);
    return fd < 0 ? TASK_NULL : (task_t)fd;
}

kern_return_t mach_task_terminate(task_t task)
{
    if (task == TASK_NULL || close((int)task) < 0) {
        return KERN_INVALID_TASK;
    }
    if ((int)task == self_fd) {
        self_fd = -1;
    }
    return KERN_SUCCESS;
}

mach_msg_return_t mach_msg_task(task_t task, mach_msg_header_t *msg, mach_msg_option_t option,
                                mach_msg_size_t send_size, mach_msg_size_t rcv_size,
                                mach_port_name_t rcv_name, mach_msg_timeout_t timeout,
                                mach_port_name_t notify)
{
    struct mach_msg_args a = {
        .msg = (uintptr_t)msg, .option = option, .send_size = send_size,
        .rcv_size = rcv_size, .rcv_name = rcv_name, .timeout = timeout, .notify = notify,
    };

    if (task == TASK_NULL || ioctl((int)task, MACH_IOC_MSG, &a) < 0) {
        return option & MACH_SEND_MSG ? MACH_SEND_INVALID_DATA : MACH_RCV_INVALID_DATA;
    }
    return a.ret;
}

mach_msg_return_t mach_msg(mach_msg_header_t *msg, mach_msg_option_t option,
                           mach_msg_size_t send_size, mach_msg_size_t rcv_size,
                           mach_port_name_t rcv_name, mach_msg_timeout_t timeout,
                           mach_port_name_t notify)
{
    return mach_msg_task(mach_task_self(), msg, option, send_size, rcv_size, rcv_name,
                         timeout, notify);
}

/* one port call: the ioctl, then the kern_return_t it carries */
static kern_return_t port_call(task_t task, unsigned long cmd, struct mach_port_args *a)
{
    if (task == TASK_NULL || ioctl((int)task, cmd, a) < 0) {
        return KERN_FAILURE;
    }
    return a->ret;
}

kern_return_t mach_port_allocate(task_t task, mach_port_right_t right, mach_port_name_t *name)
{
    struct mach_port_args a = { .right = right };
    kern_return_t kr = port_call(task, MACH_IOC_PORT_ALLOCATE, &a);

    if (kr == KERN_SUCCESS) {
        *name = a.name;
    }
    return kr;
}

kern_return_t mach_port_deallocate(task_t task, mach_port_name_t name)
{
    struct mach_port_args a = { .name = name };
    return port_call(task, MACH_IOC_PORT_DEALLOCATE, &a);
}

kern_return_t mach_port_mod_refs(task_t task, mach_port_name_t name, mach_port_right_t right,
                                 mach_port_delta_t delta)
{
    struct mach_port_args a = { .name = name, .right = right, .delta = delta };
    return port_call(task, MACH_IOC_PORT_MOD_REFS, &a);
}

kern_return_t mach_port_insert_right(task_t task, mach_port_name_t name, mach_port_name_t poly,
                                     mach_msg_type_name_t poly_type)
{
    struct mach_port_args a = { .name = name, .poly = poly, .poly_type = poly_type };
    return port_call(task, MACH_IOC_PORT_INSERT_RIGHT, &a);
}

kern_return_t mach_port_get_refs(task_t task, mach_port_name_t name, mach_port_right_t right,
                                 mach_port_urefs_t *refs)
{
    struct mach_port_args a = { .name = name, .right = right };
    kern_return_t kr = port_call(task, MACH_IOC_PORT_GET_REFS, &a);

    if (kr == KERN_SUCCESS) {
        *refs = a.value;
    }
    return kr;
}

kern_return_t mach_port_type(task_t task, mach_port_name_t name, mach_port_type_t *type)
{
    struct mach_port_args a = { .name = name };
    kern_return_t kr = port_call(task, MACH_IOC_PORT_TYPE, &a);

    if (kr == KERN_SUCCESS) {
        *type = a.value;
    }
    return kr;
}

kern_return_t mach_port_set_qlimit(task_t task, mach_port_name_t name,
                                   mach_port_msgcount_t qlimit)
{
    struct mach_port_args a = { .name = name, .value = qlimit };
    return port_call(task, MACH_IOC_PORT_SET_QLIMIT, &a);
}

kern_return_t mach_port_set_attributes(task_t task, mach_port_name_t name,
                                       mach_port_flavor_t flavor, mach_port_info_t info,
                                       mach_msg_type_number_t count)
{
    if (flavor != MACH_PORT_LIMITS_INFO) {
        return KERN_INVALID_ARGUMENT;
    }
    if (!info || count < MACH_PORT_LIMITS_INFO_COUNT) {
        return KERN_FAILURE;
    }
    return mach_port_set_qlimit(task, name, ((mach_port_limits_t *)info)->mpl_qlimit);
}

kern_return_t mach_port_get_status(task_t task, mach_port_name_t name,
                                   struct mach_port_status *status)
{
    memset(status, 0, sizeof(*status));
    status->name = name;
    if (task == TASK_NULL || ioctl((int)task, MACH_IOC_PORT_STATUS, status) < 0) {
        return KERN_FAILURE;
    }
    return status->ret;
}

/* one name-service call; a name that does not fit is KERN_INVALID_ARGUMENT */
static kern_return_t netname_call(task_t task, unsigned long cmd, unsigned node,
                                  const char *name, mach_port_name_t *port)
{
    struct mach_netname_args a = { .node = node, .port = *port };

    if (!name || strlen(name) >= sizeof(a.name)) {
        return KERN_INVALID_ARGUMENT;
    }
    strcpy(a.name, name);
    if (task == TASK_NULL || ioctl((int)task, cmd, &a) < 0) {
        return KERN_FAILURE;
    }
    *port = a.port;
    return a.ret;
}

kern_return_t netname_check_in(task_t task, const char *name, mach_port_name_t port)
{
    return netname_call(task, MACH_IOC_NETNAME_CHECK_IN, 0, name, &port);
}

kern_return_t netname_check_out(task_t task, const char *name, mach_port_name_t port)
{
    return netname_call(task, MACH_IOC_NETNAME_CHECK_OUT, 0, name, &port);
}

kern_return_t netname_look_up(task_t task, unsigned node, const char *name,
                              mach_port_name_t *port)
{
    mach_port_name_t got = MACH_PORT_NULL;
    kern_return_t kr = netname_call(task, MACH_IOC_NETNAME_LOOK_UP, node, name, &got);

    if (kr == NETNAME_SUCCESS) {
        *port = got;
    }
    return kr;
}

kern_return_t mach_host_info(struct mach_info *info)
{
    task_t task = mach_task_self();

    if (task == TASK_NULL || ioctl((int)task, MACH_IOC_INFO, info) < 0) {
        return KERN_FAILURE;
    }
    return KERN_SUCCESS;
}

kern_return_t mach_host_node(unsigned *node, unsigned *nodes)
{
    struct mach_info info;
    kern_return_t kr = mach_host_info(&info);

    if (kr == KERN_SUCCESS) {
        *node = info.node;
        *nodes = info.nodes;
    }
    return kr;
}

kern_return_t mach_msg_times(struct mach_times *times)
{
    task_t task = mach_task_self();

    if (task == TASK_NULL || ioctl((int)task, MACH_IOC_TIMES, times) < 0) {
        return KERN_FAILURE;
    }
    return KERN_SUCCESS;
}

const char *mach_error_string(kern_return_t code)
{
    static const struct { kern_return_t code; const char *name; } names[] = {
#define N(c) { c, #c }
        N(KERN_SUCCESS), N(KERN_INVALID_ADDRESS), N(KERN_PROTECTION_FAILURE),
        N(KERN_NO_SPACE), N(KERN_INVALID_ARGUMENT), N(KERN_FAILURE),
        N(KERN_RESOURCE_SHORTAGE), N(KERN_NOT_RECEIVER), N(KERN_NO_ACCESS),
        N(KERN_NAME_EXISTS), N(KERN_ABORTED), N(KERN_INVALID_NAME), N(KERN_INVALID_TASK),
        N(KERN_INVALID_RIGHT), N(KERN_INVALID_VALUE), N(KERN_UREFS_OVERFLOW),
        N(KERN_INVALID_CAPABILITY), N(KERN_RIGHT_EXISTS),
        N(MACH_SEND_INVALID_DATA), N(MACH_SEND_INVALID_DEST), N(MACH_SEND_TIMED_OUT),
        N(MACH_SEND_WILL_NOTIFY), N(MACH_SEND_NOTIFY_IN_PROGRESS), N(MACH_SEND_INTERRUPTED),
        N(MACH_SEND_MSG_TOO_SMALL), N(MACH_SEND_INVALID_REPLY), N(MACH_SEND_INVALID_RIGHT),
        N(MACH_SEND_INVALID_NOTIFY), N(MACH_SEND_INVALID_MEMORY), N(MACH_SEND_NO_BUFFER),
        N(MACH_SEND_TOO_LARGE), N(MACH_SEND_INVALID_TYPE), N(MACH_SEND_INVALID_HEADER),
        N(MACH_RCV_INVALID_NAME), N(MACH_RCV_TIMED_OUT), N(MACH_RCV_TOO_LARGE),
        N(MACH_RCV_INTERRUPTED), N(MACH_RCV_INVALID_DATA), N(MACH_RCV_PORT_DIED),
        N(MACH_RCV_HEADER_ERROR), N(MACH_RCV_BODY_ERROR),
        { MACH_RCV_BODY_ERROR | MACH_MSG_IPC_SPACE, "MACH_RCV_BODY_ERROR|MACH_MSG_IPC_SPACE" },
        { MACH_RCV_BODY_ERROR | MACH_MSG_VM_SPACE, "MACH_RCV_BODY_ERROR|MACH_MSG_VM_SPACE" },
        N(NETNAME_NOT_YOUR_PORT), N(NETNAME_NOT_CHECKED_IN), N(NETNAME_NO_SUCH_HOST),
        N(NETNAME_INVALID_PORT),
#undef N
    };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (names[i].code == code) {
            return names[i].name;
        }
    }
    return "unknown";
}
