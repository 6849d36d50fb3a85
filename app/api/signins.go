package api

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// SignIns are the remote servers' sign-ins (OAuth), kept by the daemon
// (app/remoteauth behind it).
type SignIns interface {
	// Status is the server's sign-in state; false when it has none to show
	// (not a remote server, or one that never asked for a sign-in).
	Status(server string) (wire.AuthStatus, bool)
	// Login starts a sign-in (replacing one in progress) and returns as soon
	// as its link is known; the sign-in goes on in the daemon.
	Login(ctx context.Context, server string) (wire.LoginResult, error)
	// Logout deletes the server's tokens (revoking them where supported).
	Logout(ctx context.Context, server string) (wire.LogoutResult, error)
}

func (s *Server) signInRoutes() {
	s.mux.Handle("POST /api/v1/servers/{name}/login", handle(s.remoteLogin, http.StatusOK))
	s.mux.Handle("POST /api/v1/servers/{name}/logout", handle(s.remoteLogout, http.StatusOK))
}

// remoteServer checks that name is a remote server of the config and that
// the daemon has sign-ins.
func (s *Server) remoteServer(r *http.Request) (SignIns, string, error) {
	name := r.PathValue("name")
	sc, ok := s.cfg.Current().Servers[name]
	if !ok {
		return nil, "", unknownServer(name)
	}
	if !sc.IsRemote() {
		return nil, "", errorf(http.StatusBadRequest, "server %q is a local process, not a remote server: it has no sign-in", name)
	}
	si, err := available(s.signIns, "remote sign-in is")
	return si, name, err
}

func (s *Server) remoteLogin(r *http.Request) (wire.LoginResult, error) {
	si, name, err := s.remoteServer(r)
	if err != nil {
		return wire.LoginResult{}, err
	}
	res, err := si.Login(r.Context(), name)
	if err != nil {
		return wire.LoginResult{}, errorf(http.StatusBadGateway, "%v", err)
	}
	return res, nil
}

func (s *Server) remoteLogout(r *http.Request) (wire.LogoutResult, error) {
	si, name, err := s.remoteServer(r)
	if err != nil {
		return wire.LogoutResult{}, err
	}
	res, err := si.Logout(r.Context(), name)
	if err != nil {
		return wire.LogoutResult{}, errorf(http.StatusInternalServerError, "%v", err)
	}
	return res, nil
}

// withAuth adds the server's sign-in state to its view.
func (s *Server) withAuth(v wire.ServerView) wire.ServerView {
	if s.signIns == nil {
		return v
	}
	if st, ok := s.signIns.Status(v.Name); ok {
		v.Auth = &st
	}
	return v
}
