package daemon

import (
	"log/slog"
	"slices"
)

// A teardown stops what Run's steps started, in the reverse order of their
// start: each step that starts something pushes what stops it, so a step
// that fails, or the end of ctx, stops exactly what runs and in an order
// where nothing is stopped before what depends on it.
type teardown struct {
	log     *slog.Logger
	closers []closer
}

// A closer stops one part. Its name is the message of the error line
// logged when it fails ("closing the history database").
type closer struct {
	name string
	stop func() error
}

// push adds what stops a part that has just started.
func (t *teardown) push(name string, stop func() error) {
	t.closers = append(t.closers, closer{name: name, stop: stop})
}

// run stops every part, the last started first. A closer's error is logged
// with its name and the rest go on: a part that did not stop cleanly must
// not keep the others (the servers, the lock) from stopping.
func (t *teardown) run() {
	for _, c := range slices.Backward(t.closers) {
		if err := c.stop(); err != nil {
			t.log.Error(c.name, "err", err)
		}
	}
	t.closers = nil
}
