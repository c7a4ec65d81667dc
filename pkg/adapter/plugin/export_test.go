package plugin

// PretendControllerUID makes the file checks take uid as the controller's
// user, so that a test that cannot chown (not root) still has a file owned
// by someone else; it returns the function that undoes it.
func PretendControllerUID(uid int) (undo func()) {
	old := effectiveUID
	effectiveUID = func() int { return uid }
	return func() { effectiveUID = old }
}
