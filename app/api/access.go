package api

import (
	"context"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/switchboardhq/switchboard/app/tokens"
)

// A principal is who a request speaks for: the token that authenticated
// it, directly (Authorization: Bearer) or through a dashboard session.
type principal struct {
	id    string // the token's id
	label string
	scope tokens.Scope
	// maxTier is the token's tier cap ("" for none).
	maxTier tiers.Tier
}

type principalKey struct{}

// TokenLabel returns the label of the token that authenticated the request
// whose context ctx is ("cli", or an MCP client's name), or "".
func TokenLabel(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(principal)
	return p.label
}

// TokenID returns the id of the token that authenticated the request whose
// context ctx is, or "". A dashboard session's requests carry the id of the
// "dashboard" token.
func TokenID(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(principal)
	return p.id
}

// TokenMaxTier returns the tier cap of the client token that
// authenticated the request whose context ctx is ("" for none): the
// gateway lists and serves it only the tools within it.
func TokenMaxTier(ctx context.Context) tiers.Tier {
	p, _ := ctx.Value(principalKey{}).(principal)
	return p.maxTier
}

// revokeCheckInterval is how often the tokens of open requests are looked
// up again, to end those of a token revoked by another process (a CLI
// editing tokens.json) within a second. Revoking through the API ends them
// at once.
const revokeCheckInterval = 250 * time.Millisecond

// openRequests knows every request in progress by token, so that revoking
// a token ends what it has open: event and log streams, MCP streams, calls.
// Ending a request is cancelling its context; every handler, the go-sdk's
// included, returns when it ends.
type openRequests struct {
	tokens *tokens.Store
	// revoked is told of each token found revoked while it had requests
	// open (the gateway closes its MCP sessions).
	revoked func(tokenID string)

	mu sync.Mutex
	// open: token id → the latest of its requests in progress, the head
	// of a list of them through prev and next (no map per token to make
	// and drop around each request of a client with one call at a time).
	open     map[string]*openRequest
	watching bool // a watch goroutine runs
}

// An openRequest is a request in progress, in the list of its token's.
type openRequest struct {
	o          *openRequests
	id         string // its token's
	cancel     context.CancelCauseFunc
	prev, next *openRequest
	listed     bool // in o.open[id]'s list; end takes a token's list whole
}

// errRevoked ends the requests of a revoked token.
var errRevoked = revokedError{}

type revokedError struct{}

func (revokedError) Error() string { return "the token was revoked" }

// add tracks a request of token id and returns its context, which ends when
// the token is revoked, and the function to call when the request is done.
func (o *openRequests) add(ctx context.Context, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	req := &openRequest{o: o, id: id, cancel: cancel, listed: true}
	o.mu.Lock()
	if o.open == nil {
		o.open = map[string]*openRequest{}
	}
	if head := o.open[id]; head != nil {
		req.next, head.prev = head, req
	}
	o.open[id] = req
	if !o.watching {
		o.watching = true
		go o.watch()
	}
	o.mu.Unlock()
	return ctx, req.done
}

// done takes the request out of its token's list and ends its context.
func (r *openRequest) done() {
	o := r.o
	o.mu.Lock()
	if r.listed {
		r.listed = false
		switch {
		case r.prev != nil:
			r.prev.next = r.next
		case r.next != nil:
			o.open[r.id] = r.next
		default:
			delete(o.open, r.id)
		}
		if r.next != nil {
			r.next.prev = r.prev
		}
		r.prev, r.next = nil, nil
	}
	o.mu.Unlock()
	r.cancel(nil)
}

// end cancels every open request of token id and tells revoked.
func (o *openRequests) end(id string) {
	o.mu.Lock()
	var reqs []*openRequest
	for r := o.open[id]; r != nil; r = r.next {
		r.listed = false
		reqs = append(reqs, r)
	}
	for _, r := range reqs {
		r.prev, r.next = nil, nil
	}
	delete(o.open, id)
	o.mu.Unlock()
	for _, r := range reqs {
		r.cancel(errRevoked)
	}
	if o.revoked != nil {
		o.revoked(id)
	}
}

// watch looks up the tokens of open requests every revokeCheckInterval
// and ends the requests of those gone. It returns once no request is open,
// so an idle daemon (and a test) has no goroutine left behind.
func (o *openRequests) watch() {
	t := time.NewTicker(revokeCheckInterval)
	defer t.Stop()
	for range t.C {
		o.mu.Lock()
		if len(o.open) == 0 {
			o.watching = false
			o.mu.Unlock()
			return
		}
		ids := make([]string, 0, len(o.open))
		for id := range o.open {
			ids = append(ids, id)
		}
		o.mu.Unlock()
		for _, id := range ids {
			if _, ok := o.tokens.Lookup(id); !ok {
				o.end(id)
			}
		}
	}
}
