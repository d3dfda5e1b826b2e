/*
 * libmach: Mach 3 IPC calls over /dev/mach (norma.ko), for guest programs. Reference:
 * docs/boards/libmach.md; the types, constants and return codes are Mach's, from
 * retrolink/uapi/mach.h (docs/boards/norma.md says what each means).
 *
 * A task is an open /dev/mach: its port names and rights. mach_task_self() is the
 * process's own (opened at first use); mach_task_create() opens another, so one
 * program can play several tasks, and mach_task_terminate() closes one, which
 * destroys its rights as a task's death does (its receive rights die: senders see
 * dead names). A task is shared by the threads of a process and by a fork's child
 * (the file descriptor is).
 *
 * Every call returns Mach's code: KERN_SUCCESS / MACH_MSG_SUCCESS (0) or an error
 * from uapi/mach.h. When the device itself fails (norma.ko not loaded, a bad pointer)
 * the port calls return KERN_FAILURE and mach_msg MACH_SEND_INVALID_DATA or
 * MACH_RCV_INVALID_DATA, with errno set. mach_error_string() names any code.
 */
#ifndef LIBMACH_H
#define LIBMACH_H

#include <stddef.h>
#include <stdint.h>

#include "retrolink/uapi/mach.h"

typedef mach_port_t task_t;             /* a task handle of this library */
typedef mach_port_t ipc_space_t;
#define TASK_NULL ((task_t)-1)

#define MACH_DEVICE "/dev/mach"

/* This process's task, opened at first use (TASK_NULL, errno set, if it cannot be). */
task_t mach_task_self(void);
/* Another task for this process (TASK_NULL and errno if /dev/mach cannot be opened). */
task_t mach_task_create(void);
/* Close a task: all its rights go (receive rights die). KERN_INVALID_TASK if unknown. */
kern_return_t mach_task_terminate(task_t task);

/*
 * Send and/or receive, as Mach 3's mach_msg: option is MACH_SEND_MSG and/or
 * MACH_RCV_MSG with MACH_SEND_TIMEOUT, MACH_SEND_NOTIFY, MACH_RCV_TIMEOUT,
 * MACH_RCV_LARGE; send_size the bytes to send from msg; rcv_size the room in msg for
 * a message received from rcv_name; timeout in ms; notify the port for
 * MACH_SEND_NOTIFY. With both, the send is done first and the receive only if it
 * succeeded. Uses mach_task_self().
 */
mach_msg_return_t mach_msg(mach_msg_header_t *msg, mach_msg_option_t option,
			   mach_msg_size_t send_size, mach_msg_size_t rcv_size,
			   mach_port_name_t rcv_name, mach_msg_timeout_t timeout,
			   mach_port_name_t notify);
/* The same in a given task. */
mach_msg_return_t mach_msg_task(task_t task, mach_msg_header_t *msg,
				mach_msg_option_t option, mach_msg_size_t send_size,
				mach_msg_size_t rcv_size, mach_port_name_t rcv_name,
				mach_msg_timeout_t timeout, mach_port_name_t notify);

/* A new right in task: MACH_PORT_RIGHT_RECEIVE (a new port) or _DEAD_NAME; its name. */
kern_return_t mach_port_allocate(task_t task, mach_port_right_t right,
				 mach_port_name_t *name);
/* Drop one user reference of name's send, send-once or dead-name right. */
kern_return_t mach_port_deallocate(task_t task, mach_port_name_t name);
/* Add delta to the user references of name's right of kind right (RECEIVE: -1 destroys
 * the port). */
kern_return_t mach_port_mod_refs(task_t task, mach_port_name_t name,
				 mach_port_right_t right, mach_port_delta_t delta);
/* Give name the right made from poly by poly_type (MACH_MSG_TYPE_MAKE_SEND, COPY_SEND,
 * MOVE_SEND, MAKE_SEND_ONCE, MOVE_SEND_ONCE); name must be poly, or unused. */
kern_return_t mach_port_insert_right(task_t task, mach_port_name_t name,
				     mach_port_name_t poly, mach_msg_type_name_t poly_type);
/* The user references of name's right of kind right. */
kern_return_t mach_port_get_refs(task_t task, mach_port_name_t name,
				 mach_port_right_t right, mach_port_urefs_t *refs);
/* The MACH_PORT_TYPE_* bits of name. */
kern_return_t mach_port_type(task_t task, mach_port_name_t name, mach_port_type_t *type);
/* A receive right's queue limit, MACH_PORT_QLIMIT_MIN .. MACH_PORT_QLIMIT_MAX. */
kern_return_t mach_port_set_qlimit(task_t task, mach_port_name_t name,
				   mach_port_msgcount_t qlimit);
/* The same in Mach's form: flavor MACH_PORT_LIMITS_INFO with a mach_port_limits_t (count
 * MACH_PORT_LIMITS_INFO_COUNT); another flavor is KERN_INVALID_ARGUMENT, a short count
 * KERN_FAILURE. */
typedef int mach_port_flavor_t;
typedef int *mach_port_info_t;
typedef unsigned int mach_msg_type_number_t;
#define MACH_PORT_LIMITS_INFO       1
typedef struct mach_port_limits {
	mach_port_msgcount_t mpl_qlimit;
} mach_port_limits_t;
#define MACH_PORT_LIMITS_INFO_COUNT 1
kern_return_t mach_port_set_attributes(task_t task, mach_port_name_t name,
				       mach_port_flavor_t flavor, mach_port_info_t info,
				       mach_msg_type_number_t count);
/* A receive right's queue: sequence number, limit, messages queued, rights out. */
kern_return_t mach_port_get_status(task_t task, mach_port_name_t name,
				   struct mach_port_status *status);

/* The name service, one per node: register a send right of task under name on this
 * node; look a name up on a node (this one or another: the lookup then crosses the
 * network); take a name out (only with a right to the port registered). */
kern_return_t netname_check_in(task_t task, const char *name, mach_port_name_t port);
kern_return_t netname_look_up(task_t task, unsigned node, const char *name,
			      mach_port_name_t *port);
kern_return_t netname_check_out(task_t task, const char *name, mach_port_name_t port);

/* This node and the node count. */
kern_return_t mach_host_node(unsigned *node, unsigned *nodes);
/* The limits and node numbers of the device. */
kern_return_t mach_host_info(struct mach_info *info);
/* The breakdown stamps of the last message sent and received on this node. */
kern_return_t mach_msg_times(struct mach_times *times);

/* "MACH_SEND_TIMED_OUT" and the like; "unknown" for a code Mach does not have. */
const char *mach_error_string(kern_return_t code);

/* Helpers for building messages */
static inline mach_msg_descriptor_t *mach_msg_descriptors(mach_msg_header_t *msg)
{
	return (mach_msg_descriptor_t *)((char *)msg + sizeof(*msg) + sizeof(mach_msg_body_t));
}

#endif
