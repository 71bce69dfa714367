// SPDX-License-Identifier: MIT
/*
 * A fake libtorch_cpu.so for GPU-less tests of the autograd probes
 * (tests/shell/autograd_fake.sh; the build installs it under that name):
 * the two functions xpu-record's uprobes go on, under libtorch's mangled
 * names, and nodes laid out as torch::autograd::Node begins (vtable
 * pointer, enable_shared_from_this's pointer to the node itself, its
 * control block, the sequence number).
 *
 *   xpu_fake_torch_op()        a forward op: a node with the next sequence
 *                              number, given to set_gradient_edge() in an
 *                              Edge, as an op's output tensor gets it
 *   xpu_fake_torch_bad_op()    the same with a node whose layout does not
 *                              check (no pointer to itself): not recorded
 *   xpu_fake_torch_backward(nodes, n, launch)
 *                              the backward pass: a native thread of its
 *                              own (as PyTorch's device threads) runs the
 *                              nodes newest first through
 *                              Engine::evaluate_function(), each using
 *                              0.5 ms of CPU there (fake_burn), then
 *                              calling launch(its sequence number)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

struct fake_node {
	const void *vptr;
	struct fake_node *self;
	void *ctrl;
	uint64_t seq;
};

struct fake_edge {
	struct fake_node *function;	/* std::shared_ptr<Node>: pointer, control block */
	void *ctrl;
	uint32_t input_nr;
};

static const long fake_vtable[4];
static uint64_t fake_next_seq = 1000;
static void (*fake_launch)(int);

/* about 0.5 ms of CPU , in a frame of its own */
__attribute__((noinline)) static void fake_burn(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 500000L);
}

/* torch::autograd::impl::set_gradient_edge(at::Tensor const&, torch::autograd::Edge) */
__attribute__((noinline, visibility("default")))
void _ZN5torch8autograd4impl17set_gradient_edgeERKN2at6TensorENS0_4EdgeE(const void *variable,
									  const struct fake_edge *edge)
{
	__asm__ volatile("" : : "r"(variable), "r"(edge) : "memory");
}

/* torch::autograd::Engine::evaluate_function(std::shared_ptr<GraphTask>&,
 * Node*, InputBuffer&, std::shared_ptr<ReadyQueue> const&) */
__attribute__((noinline, visibility("default")))
void _ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE(
	void *engine, void *task, struct fake_node *func, void *inputs, const void *queue)
{
	__asm__ volatile("" : : "r"(engine), "r"(task), "r"(inputs), "r"(queue) : "memory");
	fake_burn();	/* the backward op's CPU work: samples inside the node */
	if (fake_launch)
		fake_launch((int)(func->seq % 1000000));
	__asm__ volatile("" : : : "memory");	/* not a tail call: its frame stays */
}

static struct fake_node *fake_op(int good)
{
	struct fake_node *n = calloc(1, sizeof(*n));
	struct fake_edge e;

	if (!n)
		abort();
	n->vptr = fake_vtable;
	n->self = good ? n : NULL;
	n->seq = __atomic_fetch_add(&fake_next_seq, 1, __ATOMIC_RELAXED);
	e = (struct fake_edge){ n, NULL, 0 };
	_ZN5torch8autograd4impl17set_gradient_edgeERKN2at6TensorENS0_4EdgeE(NULL, &e);
	return n;
}

void *xpu_fake_torch_op(void)
{
	return fake_op(1);
}

void *xpu_fake_torch_bad_op(void)
{
	return fake_op(0);
}

struct fake_pass {
	struct fake_node **nodes;
	int n;
};

static void *fake_backward_thread(void *arg)
{
	struct fake_pass *p = arg;

	for (int i = p->n; i-- > 0; )
		_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE(
			NULL, NULL, p->nodes[i], NULL, NULL);
	return NULL;
}

void xpu_fake_torch_backward(struct fake_node **nodes, int n, void (*launch)(int))
{
	struct fake_pass p = { nodes, n };
	pthread_t t;

	fake_launch = launch;
	if (pthread_create(&t, NULL, fake_backward_thread, &p))
		abort();
	pthread_join(t, NULL);
	for (int i = 0; i < n; i++)
		free(nodes[i]);
}
