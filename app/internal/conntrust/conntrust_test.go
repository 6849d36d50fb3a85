package conntrust

import (
	"context"
	"testing"
)

// requestKey is the key of a value a request puts in its context.
type requestKey struct{}

func TestTrustMarksTheConnectionOfItsContext(t *testing.T) {
	trusted := 0
	ctx := With(context.Background(), func() { trusted++ })
	Trust(context.WithValue(ctx, requestKey{}, "a request's own value"))
	if trusted != 1 {
		t.Errorf("trusted %d times, want 1", trusted)
	}
	Trust(context.Background()) // no connection to mark: nothing happens
}
