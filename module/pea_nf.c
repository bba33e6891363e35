// SPDX-License-Identifier: GPL-2.0
/*
 * pea: netfilter packet producers (built when the kernel has
 * CONFIG_NETFILTER; the ioctl answers EOPNOTSUPP otherwise).
 *
 * PEA_MAP_IOC_ATTACH_NF on a map fd registers a netfilter hook in the
 * caller's network namespace and returns a link fd (the link rules of
 * pea_link.c). The hook always accepts the packet. Per packet it writes
 * one record through pea_skb_output(), one reservation: a struct
 * pea_nf_record, then the packet's first bytes from skb->data (the network
 * header at every inet hook), linear part and fragments alike.
 *
 * Hooks run in softirq context (receive) or in the sending task with
 * bottom halves possibly disabled, always inside rcu_read_lock(): the
 * writer takes no lock, allocates nothing and never sleeps. Detaching
 * unregisters the hook and waits for an RCU grace period, after which no
 * hook of the link runs.
 */
#include <linux/capability.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/nsproxy.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>
#include "pea_internal.h"
#include "pea_link.h"
#include "pea_provider.h"
#include "pea_perm.h"

/* A netfilter link: the link, then its hook in one network namespace. */
struct pea_nf_link {
	struct pea_link link;	/* first: pea_link_free() frees it */
	struct nf_hook_ops ops;
	struct net *net;	/* referenced while the hook is registered */
	u32 packet_len;		/* packet bytes per record, at most */
};

static_assert(offsetof(struct pea_nf_link, link) == 0);

static struct pea_nf_link *pea_nf(struct pea_link *l)
{
	return container_of(l, struct pea_nf_link, link);
}

static const char * const pea_nf_hook_names[] = {
	[PEA_NF_PRE_ROUTING] = "PRE_ROUTING",
	[PEA_NF_LOCAL_IN] = "LOCAL_IN",
	[PEA_NF_FORWARD] = "FORWARD",
	[PEA_NF_LOCAL_OUT] = "LOCAL_OUT",
	[PEA_NF_POST_ROUTING] = "POST_ROUTING",
};

/* The L4 protocol from the network header at skb->data, 0 if not there. */
static u16 pea_nf_protocol(const struct sk_buff *skb, u8 family)
{
	u8 proto;
	int off;

	off = family == NFPROTO_IPV4 ? offsetof(struct iphdr, protocol) :
				       offsetof(struct ipv6hdr, nexthdr);
	if (skb_copy_bits(skb, off, &proto, 1))
		return 0;
	return proto;
}

static unsigned int pea_nf_hook(void *priv, struct sk_buff *skb,
				const struct nf_hook_state *state)
{
	struct pea_link *l = priv;
	struct pea_nf_link *nf = pea_nf(l);
	struct task_struct *task = current;
	struct pea_nf_record r;
	long err;
	u32 n = min(nf->packet_len, skb->len);

	/* LOCAL_OUT may run preemptible: stay on one CPU from here. */
	preempt_disable();
	r.time_ns = ktime_get_mono_fast_ns();
	r.id = l->rec_id;
	r.family = state->pf;
	r.hook = state->hook;
	r.cpu = smp_processor_id();
	r.flags = PEA_REC_F_NETFILTER;
	r.protocol = pea_nf_protocol(skb, state->pf);
	if (in_task()) {
		r.pid = task_pid_nr_ns(task, l->pid_ns);
		r.tgid = task_tgid_nr_ns(task, l->pid_ns);
		strscpy_pad(r.comm, task->comm, sizeof(r.comm));
	} else {
		r.pid = 0;
		r.tgid = 0;
		memset(r.comm, 0, sizeof(r.comm));
	}
	r.ifindex_in = state->in ? state->in->ifindex : 0;
	r.ifindex_out = state->out ? state->out->ifindex : 0;
	r.skb_len = skb->len;
	r.packet_len = n;

	/* this_cpu_inc(): a softirq hook may interrupt a LOCAL_OUT one. */
	pea_link_count_hit(l);
	err = pea_skb_output(l->map, PEA_F_CURRENT_CPU | ((u64)n << 32), skb,
			     &r, sizeof(r));
	if (err)
		pea_link_count_err(l, err);
	else
		this_cpu_inc(l->stats->written);
	preempt_enable();
	return NF_ACCEPT;
}

/**
 * pea_nf_unregister() - remove a netfilter link's hook
 * @l: the link
 *
 * Hooks run under rcu_read_lock(): after the grace period no hook of @l
 * runs any more. Drops the link's namespace reference.
 */
static void pea_nf_unregister(struct pea_link *l)
{
	struct pea_nf_link *nf = pea_nf(l);

	if (!nf->net)
		return;
	nf_unregister_net_hook(nf->net, &nf->ops);
	synchronize_net();
	put_net(nf->net);
	nf->net = NULL;
}

static int pea_nf_register(struct pea_link *l, const void *arg)
{
	struct pea_nf_link *nf = pea_nf(l);
	/* The attaching task's namespace, pea_nf_attach() checked. */
	struct net *net = current->nsproxy->net_ns;
	int err;

	nf->ops.hook = pea_nf_hook;
	nf->ops.priv = l;
	err = nf_register_net_hook(net, &nf->ops);
	if (err)
		return err;
	nf->net = get_net(net);
	return 0;
}

static int pea_nf_check_attr(const struct pea_nf_attr *a)
{
	if (a->flags & ~PEA_NF_FLAGS || a->reserved)
		return -EINVAL;
	if (!(a->flags & PEA_NF_F_PRIORITY) && a->priority)
		return -EINVAL;
	if (a->family != PEA_NF_IPV4 && a->family != PEA_NF_IPV6)
		return -EAFNOSUPPORT;
	if (a->hook > PEA_NF_POST_ROUTING)
		return -EPROTO;
	if ((a->flags & PEA_NF_F_PRIORITY) &&
	    (a->priority == NF_IP_PRI_FIRST || a->priority == NF_IP_PRI_LAST))
		return -ERANGE;
	if (!a->packet_len)
		return -EINVAL;
	if (a->packet_len > PEA_NF_PACKET_MAX)
		return -E2BIG;
	return 0;
}

/**
 * pea_nf_attach() - PEA_MAP_IOC_ATTACH_NF: attach a netfilter producer
 * @map: the map the producer writes into (the ioctl's map fd)
 * @ua: struct pea_nf_attr in user memory
 *
 * Return: a link fd, or -EPERM (needs CAP_BPF and CAP_NET_ADMIN, or
 * CAP_SYS_ADMIN, as a BPF program at a network hook), -EFAULT, -EINVAL
 * (attr, packet_len 0), -E2BIG (attr tail, packet_len past
 * PEA_NF_PACKET_MAX), -EAFNOSUPPORT (family), -EPROTO (hook), -ERANGE
 * (priority INT_MIN or INT_MAX), -EMLINK (PEA_MAX_LINKS live),
 * nf_register_net_hook()'s errors, -ENOMEM, -EMFILE.
 */
static long pea_nf_attach(struct pea_map *map, const void __user *ua)
{
	struct pea_nf_attr a;
	struct pea_nf_link *nf;
	struct pea_link *l;
	long err;

	/*
	 * The rule of a BPF program at a network hook writing into a perf
	 * event array: CAP_BPF and CAP_NET_ADMIN in the initial user
	 * namespace (pea_perm.c, docs/security.md).
	 */
	err = pea_perm_netfilter();
	if (err)
		return err;
	err = pea_link_copy_attr(&a, sizeof(a), sizeof(a), ua);
	if (err)
		return err;
	err = pea_nf_check_attr(&a);
	if (err)
		return err;
	l = pea_link_alloc(map, &pea_nf_provider, a.id, a.flags, 0, -1);
	if (IS_ERR(l))
		return PTR_ERR(l);
	nf = pea_nf(l);
	nf->packet_len = a.packet_len;
	nf->ops.pf = a.family;
	nf->ops.hooknum = a.hook;
	nf->ops.priority = a.flags & PEA_NF_F_PRIORITY ? a.priority :
			   PEA_NF_PRI_DEFAULT;
	l->addr = (u64)(s64)nf->ops.priority;
	snprintf(l->symbol, sizeof(l->symbol), "netfilter:%s:%s",
		 a.family == PEA_NF_IPV4 ? "ipv4" : "ipv6",
		 pea_nf_hook_names[a.hook]);
	return pea_link_install(l, a.flags & PEA_NF_F_CLOEXEC, NULL);
}

const struct pea_provider pea_nf_provider = {
	.link_size = sizeof(struct pea_nf_link),
	.attach = pea_nf_attach,
	.reg = pea_nf_register,
	.unregister = pea_nf_unregister,
};
