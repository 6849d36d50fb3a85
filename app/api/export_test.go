package api

// TrySecret is the daemon's own MCP client's credential (trytool.go), for
// the tests of what it reaches.
func (s *Server) TrySecret() string { return s.try.secret }
