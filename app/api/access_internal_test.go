package api

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/app/tokens"
)

// The requests in progress of a token are a list through the requests:
// each ends alone whichever its place in the list, and ending the token
// cancels those left, with errRevoked, and no other token's.
func TestOpenRequestsList(t *testing.T) {
	store, err := tokens.Open(filepath.Join(t.TempDir(), tokens.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var revoked []string
	o := &openRequests{tokens: store, revoked: func(id string) { revoked = append(revoked, id) }}
	type req struct {
		ctx  context.Context
		done func()
	}
	add := func(id string) req {
		ctx, done := o.add(t.Context(), id)
		return req{ctx, done}
	}
	count := func(id string) int {
		o.mu.Lock()
		defer o.mu.Unlock()
		n := 0
		for r := o.open[id]; r != nil; r = r.next {
			n++
		}
		return n
	}
	a := []req{add("a"), add("a"), add("a"), add("a")}
	b := add("b")
	if count("a") != 4 || count("b") != 1 {
		t.Fatalf("listed %d and %d, want 4 and 1", count("a"), count("b"))
	}
	a[1].done() // in the middle
	a[3].done() // the head: the latest added
	if count("a") != 2 {
		t.Fatalf("after two ended: %d listed, want 2", count("a"))
	}
	if a[1].ctx.Err() == nil || a[3].ctx.Err() == nil {
		t.Error("an ended request's context is not done")
	}
	o.end("a")
	for _, i := range []int{0, 2} {
		if !errors.Is(context.Cause(a[i].ctx), errRevoked) {
			t.Errorf("request %d: cause %v, want errRevoked", i, context.Cause(a[i].ctx))
		}
		a[i].done() // after the revocation: nothing to take out
	}
	if count("a") != 0 || len(revoked) != 1 || revoked[0] != "a" {
		t.Errorf("after end: %d listed, revoked %v", count("a"), revoked)
	}
	if b.ctx.Err() != nil || count("b") != 1 {
		t.Error("another token's request was ended")
	}
	again := add("a")
	if count("a") != 1 {
		t.Errorf("a request of the token after its end: %d listed, want 1", count("a"))
	}
	again.done()
	b.done()
	o.mu.Lock()
	left := len(o.open)
	o.mu.Unlock()
	if left != 0 {
		t.Errorf("%d tokens still listed, want none", left)
	}
}
