package tray

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
)

// InstallEvent is the data of an "install" event.
type InstallEvent struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Phase  string `json:"phase"`
	Done   bool   `json:"done"`
	Error  string `json:"error"`
	// Tools is the verified tool list (its shape is the installer's).
	Tools json.RawMessage `json:"tools"`
}

// StateEvent is the data of a "state" event.
type StateEvent struct {
	Server  string `json:"server"`
	Kind    string `json:"kind"`
	State   string `json:"state"`
	Message string `json:"message"`
}

// errNoEvents is returned by followEvents when the daemon has no event
// stream (an older daemon: 404, or one without a bus: 503).
var errNoEvents = errors.New("the daemon has no event stream")

// followedTypes are the events the tray redraws on; log lines it ignores.
var followedTypes = []string{wire.TypeState, wire.TypeConfig, wire.TypeInstall, wire.TypeCall,
	wire.TypeSample, wire.TypeDropped, wire.TypeApproval, wire.TypeAuth, wire.TypeAsk}

// followEvents reads the daemon's event stream, calling fn for each event,
// until ctx ends or the stream breaks. lastID resumes after that event; it
// returns the last id seen.
func followEvents(ctx context.Context, c *client.Client, lastID uint64, fn func(wire.Event)) (uint64, error) {
	err := c.Events(ctx, lastID, followedTypes, func(ev wire.Event) error {
		if ev.ID != 0 {
			lastID = ev.ID
		}
		fn(ev)
		return nil
	})
	if ae, ok := errors.AsType[*client.APIError](err); ok && (ae.Status == http.StatusNotFound || ae.Status == http.StatusServiceUnavailable) {
		return lastID, errNoEvents
	}
	return lastID, err
}
