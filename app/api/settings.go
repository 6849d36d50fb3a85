package api

import (
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/app/config"
)

// Settings are the daemon's settings the dashboard changes
// (GET and PUT /api/v1/settings); they live in config.json.
type Settings struct {
	Retention Retention `json:"retention"`
}

// Retention is how much call history is kept. GET answers the bounds in
// force (defaults filled in); a PUT with 0 restores a default.
type Retention struct {
	MaxAge   config.Duration `json:"maxAge"`
	MaxBytes int64           `json:"maxBytes"`
}

// The history's defaults, as config.History's zero value means.
const (
	DefaultRetentionAge   = 30 * 24 * time.Hour
	DefaultRetentionBytes = 1 << 30
)

func (s *Server) settingsRoutes() {
	s.mux.Handle("GET /api/v1/settings", handle(s.getSettings, http.StatusOK))
	s.mux.Handle("PUT /api/v1/settings", handle(s.putSettings, http.StatusOK))
}

func settingsOf(c *config.Config) Settings {
	r := Retention{MaxAge: c.History.MaxAge, MaxBytes: c.History.MaxBytes}
	if r.MaxAge.Duration == 0 {
		r.MaxAge.Duration = DefaultRetentionAge
	}
	if r.MaxBytes == 0 {
		r.MaxBytes = DefaultRetentionBytes
	}
	return Settings{Retention: r}
}

func (s *Server) getSettings(*http.Request) (Settings, error) {
	return settingsOf(s.cfg.Current()), nil
}

// putSettings writes the settings into config.json; the daemon applies
// them at once (the next retention pass uses the new bounds).
func (s *Server) putSettings(r *http.Request) (Settings, error) {
	var in Settings
	if err := decodeBody(r, &in); err != nil {
		return Settings{}, err
	}
	cfg, err := s.cfg.Update(r.Context(), func(c *config.Config) error {
		c.History = config.History{MaxAge: in.Retention.MaxAge, MaxBytes: in.Retention.MaxBytes}
		if err := c.Validate(); err != nil {
			return errorf(http.StatusBadRequest, "invalid settings: %v", err)
		}
		return nil
	})
	if err != nil {
		return Settings{}, updateError(err)
	}
	return settingsOf(cfg), nil
}
