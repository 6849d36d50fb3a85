package supervisor

// QuickLeases is how many quick leases p handed out (quicklease.go).
func QuickLeases(p *Pool) int64 { return p.quickLeases.Load() }
