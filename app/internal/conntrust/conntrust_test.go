package conntrust

import (
	"context"
	"testing"
)

func TestTrustMarksTheConnectionOfItsContext(t *testing.T) {
	trusted := 0
	ctx := With(context.Background(), func() { trusted++ })
	Trust(context.WithValue(ctx, struct{}{}, "a request's own value"))
	if trusted != 1 {
		t.Errorf("trusted %d times, want 1", trusted)
	}
	Trust(context.Background()) // no connection to mark: nothing happens
}
