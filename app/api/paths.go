package api

import (
	"net/http"
	"os"
	"strings"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/catalog/install"
)

// checkPath answers POST /api/v1/paths/check: whether a path an install
// form was given exists and is a folder, and what the installer would
// refuse about it. Only admin tokens reach the API (see secure), and only
// os.Stat is done: nothing is opened, listed or read, so the answer says
// no more about the disk than the user's own file manager would.
func (s *Server) checkPath(r *http.Request) (wire.PathCheck, error) {
	var req wire.PathCheckRequest
	if err := decodeStrictBody(r, &req); err != nil {
		return wire.PathCheck{}, err
	}
	if strings.TrimSpace(req.Path) == "" {
		return wire.PathCheck{}, errorf(http.StatusBadRequest, "path is required")
	}
	if req.Kind == "" {
		req.Kind = "filepath"
	}
	var out wire.PathCheck
	if fi, err := os.Stat(req.Path); err == nil {
		out.Exists, out.IsDir = true, fi.IsDir()
	}
	if err := install.CheckPath(req.Kind, req.Path); err != nil {
		out.Error = err.Error()
	}
	return out, nil
}
