package api

import (
	"errors"
	"net/http"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/asks"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// Asks is the board of calls waiting for the user's yes (app/asks).
type Asks interface {
	Pending() []asks.Ask
	Answer(id string, allowed bool, by string) (asks.Answer, error)
}

func (s *Server) askRoutes() {
	s.mux.Handle("GET /api/v1/asks", handle(s.listAsks, http.StatusOK))
	s.mux.Handle("POST /api/v1/asks/{id}", handle(s.answerAsk, http.StatusOK))
	s.mux.Handle("PUT /api/v1/servers/{name}/ask-before-destructive", handle(s.setServerAsks, http.StatusOK))
	s.mux.Handle("PUT /api/v1/profiles/{name}/ask-before-destructive", handle(s.setProfileAsks, http.StatusOK))
}

func (s *Server) listAsks(*http.Request) ([]wire.Ask, error) {
	b, err := available(s.asks, "the board of pending asks is")
	if err != nil {
		return nil, err
	}
	return convertAll(b.Pending(), func(a asks.Ask) wire.Ask { return wire.Ask(a) }), nil
}

// decider is who answers through the API, by the token of the request:
// the CLI's, the tray's, or the dashboard (the window's and the browser's).
func decider(label string) string {
	switch label {
	case tokens.LabelCLI:
		return record.DecidedByCLI
	case tokens.LabelTray:
		return record.DecidedByTray
	}
	return record.DecidedByDashboard
}

func (s *Server) answerAsk(r *http.Request) (wire.AskDecision, error) {
	b, err := available(s.asks, "the board of pending asks is")
	if err != nil {
		return wire.AskDecision{}, err
	}
	var in wire.AskAnswer
	if err := decodeStrictBody(r, &in); err != nil {
		return wire.AskDecision{}, err
	}
	id, by := r.PathValue("id"), decider(TokenLabel(r.Context()))
	ans, err := b.Answer(id, in.Allow, by)
	if errors.Is(err, asks.ErrUnknown) {
		return wire.AskDecision{}, errorf(http.StatusNotFound, "no pending ask %q: it was answered, timed out, or never was (see GET /api/v1/asks)", id)
	} else if err != nil {
		return wire.AskDecision{}, err
	}
	return wire.AskDecision(ans), nil
}

func (s *Server) setServerAsks(r *http.Request) (wire.AskSetting, error) {
	var in wire.AskSetting
	if err := decodeStrictBody(r, &in); err != nil {
		return wire.AskSetting{}, err
	}
	name := r.PathValue("name")
	_, err := s.update(r.Context(), "", func(c *config.Config) error {
		sc, ok := c.Servers[name]
		if !ok {
			return unknownServer(name)
		}
		sc.AskBeforeDestructive = in.Enabled
		c.Servers[name] = sc
		return nil
	})
	return in, err
}

func (s *Server) setProfileAsks(r *http.Request) (wire.AskSetting, error) {
	var in wire.AskSetting
	if err := decodeStrictBody(r, &in); err != nil {
		return wire.AskSetting{}, err
	}
	name := r.PathValue("name")
	_, err := s.update(r.Context(), "", func(c *config.Config) error {
		p, ok := c.Profiles[name]
		if !ok {
			return errorf(http.StatusNotFound, "no profile %q in config.json", name)
		}
		p.AskBeforeDestructive = in.Enabled
		c.Profiles[name] = p
		return nil
	})
	return in, err
}
