/* A ring buffer: the usual shapes of C. */
#include <stdio.h>
#include "ring.h"  /* local */

  #ifdef DEBUG
#  define LOG(...) fprintf(stderr, __VA_ARGS__) // trace
  #endif
#if 0
dead code
#endif

typedef struct ring {
    unsigned char *data;
    size_t head, tail, cap;
} ring_t;

static const char *names[] = { "a", "b", NULL };

static inline size_t ring_len(const ring_t *r)
{
    return (r->head - r->tail) % r->cap;
}

int ring_push(ring_t *r, unsigned char c);  // declaration

int
ring_push(ring_t *r, unsigned char c) /* K&R-ish layout */
{
    if (ring_len(r) + 1 == r->cap) {
        goto full;
    }
    r->data[r->head++ % r->cap] = c;
    return 0;
full:
    LOG("full: %zu\n", r->cap);
    return -1;
}

int main(int argc, char **argv) {
    ring_t r = {0};
    double x = 1.5e-3f, y = 0x1.8p3;
    long z = 0xFFul + 017 + 0b101;
    char q = '\n';
    switch (argc) {
    case 1: break;
    default: printf("%s\n", argv[0]);
    }
    return ring_push(&r, 'x') < 0 ? 1 : 0;
}
