package api

import (
	"errors"
	"net/http"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// CLITokenLabel is the label of the command line's token, which also signs
// the dashboard in (switchboard open). The API refuses to revoke it: that
// would lock the CLI out until it is issued again.
const CLITokenLabel = tokens.LabelCLI

func (s *Server) tokenRoutes() {
	s.mux.Handle("GET /api/v1/tokens", handle(s.listTokens, http.StatusOK))
	s.mux.Handle("DELETE /api/v1/tokens/{label}", handle(s.revokeTokens, http.StatusOK))
}

func tokenViews(toks []tokens.Token) []wire.TokenView {
	out := make([]wire.TokenView, 0, len(toks))
	for _, t := range toks {
		v := wire.TokenView{ID: t.ID, Label: t.Label, Scope: string(t.Scope), Profile: t.Profile, MaxTier: string(t.MaxTier), Created: t.Created}
		if !t.LastUsed.IsZero() {
			used := t.LastUsed
			v.LastUsed = &used
		}
		out = append(out, v)
	}
	return out
}

func (s *Server) listTokens(r *http.Request) ([]wire.TokenView, error) {
	if err := s.tokens.Problem(); err != nil {
		return nil, errorf(http.StatusInternalServerError, "%v", err)
	}
	return tokenViews(s.tokens.List()), nil
}

// revokeTokens revokes every token with the path's label and returns them.
// The client that held one gets 401 from its next request; connecting the
// client again issues a new token.
func (s *Server) revokeTokens(r *http.Request) ([]wire.TokenView, error) {
	label := r.PathValue("label")
	if label == CLITokenLabel || label == TokenLabel(r.Context()) {
		return nil, errorf(http.StatusForbidden,
			"refusing to revoke the %q token: this request was made with it, and the CLI and the dashboard need it; "+
				"revoke client tokens only (to replace it, stop Switchboard, remove it from %s and start Switchboard again)",
			label, s.tokens.Path())
	}
	gone, err := s.tokens.RevokeLabel(label)
	if errors.Is(err, tokens.ErrNotFound) {
		return nil, errorf(http.StatusNotFound, "%v", err)
	}
	if err != nil {
		return nil, err
	}
	// What the tokens have open ends now, not at the next check.
	for _, t := range gone {
		s.open.end(t.ID)
	}
	s.log.Info("revoked tokens", "label", label, "count", len(gone))
	return tokenViews(gone), nil
}
