package maintenance

// SetBeforeCommit makes f run before each expiry commit attempt (nil:
// nothing); for the tests of package maintenance_test.
func SetBeforeCommit(f func()) { beforeCommit = f }
