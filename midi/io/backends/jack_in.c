/* scorch's own JACK MIDI input: JACK's process thread never runs Python.
 *
 * Each cycle the process callback copies the input port's events into a
 * single-producer single-consumer byte ring and, if it copied any, adds 1 to an
 * eventfd that the router's input thread blocks on. So that thread wakes the
 * moment a cycle brought MIDI (not on a poll), and sleeps while none comes; the
 * JACK thread takes no lock and never waits for Python's GIL, so a busy
 * interpreter costs no cycle and loses no message.
 *
 * libjack is not linked: the caller names the libjack that the process already
 * loaded (python-rtmidi's wheel brings its own copy, and a second copy would map
 * JACK's shared segment twice), and its functions are looked up with dlsym.
 * Built by midi/jack_in.py with the system's C compiler, on first use.
 *
 * A record in the ring: u64 time (JACK's microseconds, the event's frame in its
 * cycle), u32 size, then the bytes.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint32_t jack_nframes_t;
typedef uint64_t jack_time_t;
typedef struct {
    jack_nframes_t time;
    size_t size;
    unsigned char *buffer;
} jack_midi_event_t;
typedef int (*process_cb)(jack_nframes_t, void *);

#define JACK_NO_START_SERVER 0x01
#define JACK_PORT_IS_INPUT 0x1
#define RING_SIZE (1u << 20) /* 1 MiB: 4 s of a 20,000 messages/s flood */
#define HEADER 12u
#define MAX_RECORD (1u << 18) /* what the reader takes at most in one call (jack_in.ROOM) */

static void *(*client_open)(const char *, int, int *, ...);
static int (*client_close)(void *);
static int (*set_process_callback)(void *, process_cb, void *);
static void *(*port_register)(void *, const char *, const char *, unsigned long,
                              unsigned long);
static const char *(*port_name)(const void *);
static void *(*port_get_buffer)(void *, jack_nframes_t);
static int (*activate)(void *);
static int (*deactivate)(void *);
static int (*jconnect)(void *, const char *, const char *);
static uint32_t (*event_count)(void *);
static int (*event_get)(jack_midi_event_t *, void *, uint32_t);
static int (*cycle_times)(const void *, jack_nframes_t *, jack_time_t *, jack_time_t *,
                          float *);
static int (*is_realtime)(void *);
static unsigned long (*thread_id)(void *);
static int (*acquire_realtime)(unsigned long, int);
static int (*set_port_registration_callback)(void *, void (*)(uint32_t, int, void *), void *);
static int (*set_port_connect_callback)(void *, void (*)(uint32_t, uint32_t, int, void *),
                                        void *);
static void *(*port_by_id)(void *, uint32_t);

typedef struct {
    void *client;
    void *port;
    int efd;
    int ports_efd; /* -1, or told of every port that comes or goes on the server, and of
                    * every connection made to or broken from this client's port */
    unsigned ignore; /* 1: SysEx, 2: clock and MTC quarter frames, 4: active sensing */
    _Atomic uint64_t head; /* written by JACK's thread */
    _Atomic uint64_t tail; /* written by the reader */
    _Atomic uint64_t dropped;
    _Atomic int closing;
    unsigned char ring[RING_SIZE];
} input_t;

static int bind_jack(const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (lib == NULL) return -1;
#define LOOK(var, name) if ((*(void **)&var = dlsym(lib, name)) == NULL) return -1
    LOOK(client_open, "jack_client_open");
    LOOK(client_close, "jack_client_close");
    LOOK(set_process_callback, "jack_set_process_callback");
    LOOK(port_register, "jack_port_register");
    LOOK(port_name, "jack_port_name");
    LOOK(port_get_buffer, "jack_port_get_buffer");
    LOOK(activate, "jack_activate");
    LOOK(deactivate, "jack_deactivate");
    LOOK(jconnect, "jack_connect");
    LOOK(event_count, "jack_midi_get_event_count");
    LOOK(event_get, "jack_midi_event_get");
    LOOK(cycle_times, "jack_get_cycle_times");
    LOOK(is_realtime, "jack_is_realtime");
    LOOK(thread_id, "jack_client_thread_id");
    LOOK(acquire_realtime, "jack_acquire_real_time_scheduling");
    LOOK(set_port_registration_callback, "jack_set_port_registration_callback");
    LOOK(set_port_connect_callback, "jack_set_port_connect_callback");
    LOOK(port_by_id, "jack_port_by_id");
#undef LOOK
    return 0;
}

static void put(input_t *in, uint64_t at, const void *data, size_t size) {
    size_t first = RING_SIZE - (size_t)(at % RING_SIZE);
    if (first > size) first = size;
    memcpy(in->ring + at % RING_SIZE, data, first);
    memcpy(in->ring, (const unsigned char *)data + first, size - first);
}

static void get(const input_t *in, uint64_t at, void *data, size_t size) {
    size_t first = RING_SIZE - (size_t)(at % RING_SIZE);
    if (first > size) first = size;
    memcpy(data, in->ring + at % RING_SIZE, first);
    memcpy((unsigned char *)data + first, in->ring, size - first);
}

static int ignored(const input_t *in, unsigned char status) {
    if (status == 0xF0) return in->ignore & 1;
    if (status == 0xF8 || status == 0xF1) return in->ignore & 2;
    if (status == 0xFE) return in->ignore & 4;
    return 0;
}

/* JACK's process thread, named once so that a look at the process's threads can tell
 * it (it wakes every cycle, MIDI or not: the cost of any JACK client). */
static _Thread_local int named;

static int process(jack_nframes_t frames, void *arg) {
    input_t *in = arg;
    if (!named) {
        pthread_setname_np(pthread_self(), "midi-jack-cycle");
        named = 1;
    }
    if (atomic_load_explicit(&in->closing, memory_order_relaxed)) return 0;
    void *buffer = port_get_buffer(in->port, frames);
    uint32_t count = event_count(buffer);
    if (count == 0) return 0;
    jack_nframes_t cycle_frame;
    jack_time_t now, next;
    float period;
    if (cycle_times(in->client, &cycle_frame, &now, &next, &period) != 0) next = now = 0;
    uint64_t head = atomic_load_explicit(&in->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&in->tail, memory_order_acquire);
    int wrote = 0;
    for (uint32_t i = 0; i < count; i++) {
        jack_midi_event_t event;
        if (event_get(&event, buffer, i) != 0 || event.size == 0) continue;
        if (ignored(in, event.buffer[0])) continue;
        if (HEADER + event.size > MAX_RECORD || head - tail + HEADER + event.size > RING_SIZE) {
            atomic_fetch_add_explicit(&in->dropped, 1, memory_order_relaxed);
            continue;
        }
        unsigned char header[HEADER];
        uint64_t at = now + (frames ? (uint64_t)(next - now) * event.time / frames : 0);
        uint32_t size = (uint32_t)event.size;
        memcpy(header, &at, 8);
        memcpy(header + 8, &size, 4);
        put(in, head, header, HEADER);
        put(in, head + HEADER, event.buffer, event.size);
        head += HEADER + event.size;
        wrote = 1;
    }
    if (wrote) {
        atomic_store_explicit(&in->head, head, memory_order_release);
        uint64_t one = 1;
        ssize_t done = write(in->efd, &one, sizeof one); /* never blocks: a counter */
        (void)done;
    }
    return 0;
}

/* A port came or went on the server (JACK's notification thread: no Python runs here). */
static void port_changed(uint32_t port, int registered, void *arg) {
    (void)port;
    (void)registered;
    uint64_t one = 1;
    ssize_t done = write(((input_t *)arg)->ports_efd, &one, sizeof one);
    (void)done;
}

/* A connection to this client's port was made or broken (JACK's notification thread): a
 * device connected to scorch's own input that the router also opens would play twice. */
static void connection_changed(uint32_t from, uint32_t to, int connected, void *arg) {
    (void)from;
    (void)connected;
    input_t *in = arg;
    if (port_by_id(in->client, to) != in->port) return;
    uint64_t one = 1;
    ssize_t done = write(in->ports_efd, &one, sizeof one);
    (void)done;
}

/* Open a client with one MIDI input port; connect it to `source` unless NULL; its
 * process thread realtime at `priority` if the server's are not (0: left as it is); with
 * `ports_efd` >= 0, 1 is added to it whenever a port comes or goes on the server, or a
 * connection to this port is made or broken.
 * Returns NULL with *error set: 1 libjack, 2 client, 3 port, 4 activate, 5 connect. */
void *scorch_jack_in_open(const char *libjack, const char *client_name, const char *port,
                          const char *source, int efd, unsigned ignore, int priority,
                          int ports_efd, int *error) {
    *error = 1;
    if (client_open == NULL && bind_jack(libjack) != 0) return NULL;
    input_t *in = calloc(1, sizeof *in);
    if (in == NULL) return NULL;
    in->efd = efd;
    in->ports_efd = ports_efd;
    in->ignore = ignore;
    int status = 0;
    *error = 2;
    in->client = client_open(client_name, JACK_NO_START_SERVER, &status);
    if (in->client == NULL) goto fail;
    *error = 3;
    in->port = port_register(in->client, port, "8 bit raw midi", JACK_PORT_IS_INPUT, 0);
    if (in->port == NULL || set_process_callback(in->client, process, in) != 0) goto fail;
    if (ports_efd >= 0 && (set_port_registration_callback(in->client, port_changed, in) != 0
                           || set_port_connect_callback(in->client, connection_changed, in) != 0))
        goto fail;
    *error = 4;
    if (activate(in->client) != 0) goto fail;
    /* On a server without realtime scheduling every client thread is an ordinary one,
     * and one late by a cycle loses that cycle's MIDI. This one does a memcpy per
     * cycle: it may take `priority` (SCHED_FIFO) where the process is allowed to. */
    if (priority > 0 && !is_realtime(in->client))
        acquire_realtime(thread_id(in->client), priority); /* refused: stays ordinary */
    *error = 5;
    if (source != NULL && jconnect(in->client, source, port_name(in->port)) != 0) goto fail;
    *error = 0;
    return in;
fail:
    if (in->client != NULL) client_close(in->client);
    free(in);
    return NULL;
}

/* The port's full name (client:port, as JACK may have renamed the client). */
const char *scorch_jack_in_name(void *handle) {
    input_t *in = handle;
    return port_name(in->port);
}

/* Copy whole records into `out` (at most `room` bytes); return the bytes copied. */
size_t scorch_jack_in_read(void *handle, unsigned char *out, size_t room) {
    input_t *in = handle;
    uint64_t tail = atomic_load_explicit(&in->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&in->head, memory_order_acquire);
    size_t used = 0;
    while (tail < head) {
        uint32_t size;
        get(in, tail + 8, &size, 4);
        if (used + HEADER + size > room) break;
        get(in, tail, out + used, HEADER + size);
        used += HEADER + size;
        tail += HEADER + size;
    }
    atomic_store_explicit(&in->tail, tail, memory_order_release);
    return used;
}

/* Messages the ring had no room for. */
uint64_t scorch_jack_in_dropped(void *handle) {
    input_t *in = handle;
    return atomic_load_explicit(&in->dropped, memory_order_relaxed);
}

/* Stop receiving: deactivate returns once JACK's thread has left the callback and
 * will not enter it again. What the ring holds can still be read. */
void scorch_jack_in_stop(void *handle) {
    input_t *in = handle;
    if (atomic_exchange(&in->closing, 1)) return;
    deactivate(in->client);
}

/* Stop, then close the client: its port is never unregistered under a running
 * callback (the crash of rtmidi's backend, which unregisters first). */
void scorch_jack_in_close(void *handle) {
    input_t *in = handle;
    scorch_jack_in_stop(in);
    client_close(in->client);
    free(in);
}
