/*
 * member.h: the membership table.  A member is a peer we have heard of,
 * through a handshake, a seed or a signed self-advertisement (GROUP_AD).
 * The table is plain data below the link layer: link.c attaches links and
 * runs the receiver checks against it, view.c decides whom to link to and
 * runs failure detection.  The receiver-side state per sender (rate
 * bucket, replay stamp, strikes, quarantine) lives here too.
 */
#ifndef MEMBER_H
#define MEMBER_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "dcbor.h"
#include "hlc.h"
#include "identity.h"
#include "metrics.h"

struct link;

enum member_state {
	MEMBER_ALIVE = 0,
	MEMBER_SUSPECT,
	MEMBER_DEAD,
};

struct member {
	uint8_t			 id[IDENTITY_ID_LEN];
	char			 peer_id[IDENTITY_PEERID_MAX];
	uint8_t			 pub[IDENTITY_PUB_LEN];
	bool			 have_pub;
	char			 name[64];
	char			 addr[64];	/* its listen address */
	enum member_state	 state;
	struct link		*link;		/* the preferred UP link */
	uint64_t		 last_heard_ms;	/* monotonic */
	uint64_t		 ping_sent_ms;	/* 0: no ping outstanding */
	bool			 ping_req_sent;
	uint64_t		 ping_seq;
	/* receiver checks */
	struct hlc_stamp	 last_stamp;	/* replay guard */
	double			 tokens;	/* rate bucket */
	uint64_t		 tokens_ms;
	uint32_t		 strikes;
	uint64_t		 quarantine_until_ms;
	/* dialing */
	bool			 dial;		/* keep a link to it */
	uint32_t		 backoff_ms;
	uint64_t		 next_dial_ms;
	uint64_t		 frames_in, frames_out;
	/* anti-entropy: when we sent it our digest / answered its digest */
	uint64_t		 ae_asked_ms;
	uint64_t		 ae_answered_ms;
	/* the view (view.c) */
	bool			 view_disc;	/* closed by DISCONNECT */
	bool			 view_joined;	/* sent its JOIN on this link */
	uint64_t		 view_shuffle_ms; /* its SHUFFLE last answered */
	uint64_t		 view_up_ms;	/* its link came up then */
	/* broadcast (plumtree.c) */
	uint64_t		 pt_lazy;	/* origins (plumtree.c slots) we push it ids for */
	uint64_t		 pt_pruned;	/* origins for which we pruned it */
	uint64_t		 pt_prune_ms;	/* our last PRUNE to it */
	struct dcbor_buf	 pt_out;	/* rumors queued for it */
	uint32_t		 pt_nout;
	uint64_t		 pt_due_ms;	/* pt_out leaves then */
	uint64_t		 pt_last_ms;	/* last rumor frame to it */
	uint64_t		*pt_ihave;	/* ids queued for its IHAVE */
	uint32_t		 pt_nihave;
	uint64_t		 pt_ihave_due_ms; /* its IHAVE leaves then */
};

void		 member_init(void);
void		 member_free_all(void);
/* Find by binary id, or NULL. */
struct member	*member_find(const uint8_t id[IDENTITY_ID_LEN]);
/* Find by PeerId text or by member name, or NULL. */
struct member	*member_named(const char *who);
/* Find or add by id; name and addr updated when given. */
struct member	*member_get(const uint8_t id[IDENTITY_ID_LEN], const char *name,
		    const char *addr);
/* All members, for iteration. */
size_t		 member_count(void);
struct member	*member_at(size_t i);
/* Members with an UP link, shuffled; at most max; excluding 'except'. */
size_t		 member_pick_up(struct member **out, size_t max,
		    const struct member *except);
/*
 * A member without a link fades by the clock: suspect --ping-timeout-ms
 * after it was last heard, dead after --silence-ms.  Applied whenever the
 * member is looked at (the tick, the "peers" answer), so no timer is armed
 * for a label.
 */
void		 member_fade(struct member *m, uint64_t now);
/* Note traffic from m (any frame): it is alive. */
void		 member_heard(struct member *m);
/* The state's name: "alive", "suspect", "dead". */
const char	*member_state_name(enum member_state s);
/* JSON list for the "peers" command. */
json_t		*member_list_json(void);
/* Move m to state s (traced and logged when it changes). */
void		 member_set_state(struct member *m, enum member_state s,
		    const char *why);
/*
 * The receiver checks of docs/protocol.md section 5 that belong to the sender, in order:
 * quarantine, age (--max-age-s), future stamp (a strike; --strikes of them
 * quarantine it for --quarantine-s), replay (the stamp must pass the last
 * accepted one), rate (a token bucket).  true: accept (the replay guard and
 * the bucket are updated); false with *why.
 */
bool		 member_admit(struct member *m, const struct hlc_stamp *stamp,
		    uint64_t wall_ms, uint64_t now_ms, enum metrics_reject *why);
/* Handle a PING_REQ body / ACK bookkeeping (called by link dispatch). */
void		 member_ack(struct member *m, uint64_t seq);

#endif
