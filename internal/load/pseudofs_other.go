//go:build !linux

package load

// pseudoFS names the pseudo-filesystem the directory real is on, or "";
// without statfs's magic numbers, by the places they are mounted.
func pseudoFS(real string) string { return pseudoByPath(real) }
