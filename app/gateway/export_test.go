package gateway

// FastCalls reports how many calls g's fast path answered (fastfront.go).
func FastCalls(g *Gateway) int64 { return g.fast.served.Load() }

// ClientSessions reports how many client sessions g's endpoints hold open.
func ClientSessions(g *Gateway) int {
	n := 0
	for _, s := range g.fronts() {
		for range s.Sessions() {
			n++
		}
	}
	return n
}

// SessionIdle reports whether session id is tracked and has no request in
// progress: the handler of its last request has returned, not only its
// answer been sent.
func SessionIdle(g *Gateway, id string) bool {
	g.idle.mu.Lock()
	defer g.idle.mu.Unlock()
	is := g.idle.sessions[id]
	return is != nil && is.refs == 0
}

// SessionOpen reports whether a front of g still has the client session
// with the given Mcp-Session-Id, without touching it (a request would count
// as activity).
func SessionOpen(g *Gateway, id string) bool {
	for _, s := range g.fronts() {
		for ss := range s.Sessions() {
			if ss.ID() == id {
				return true
			}
		}
	}
	return false
}

// MaxRequestBody is the bound on an MCP request's body (httpchecks.go).
const MaxRequestBody = maxRequestBody
