package gateway

// FastCalls reports how many calls g's fast path answered (fastfront.go).
func FastCalls(g *Gateway) int64 { return g.fast.served.Load() }
