package supervisor

// IsQuick reports whether l is a quick lease (quicklease.go).
func IsQuick(l *Lease) bool { return l.quick }
