// Package testhooks holds what the tests need from the library and its
// users must not get: an operation that panics (__panic) and a pause before
// a row-level operation's or an update_table's first commit attempt (the session keys
// test.commit-delay-ms and test.commit-delay-signal), both behind the
// session key test.hooks=true.
//
// They are compiled in only with the build tag pig_testhooks
// (PIG_TAGS=pig_testhooks ./build.sh writes
// build/libpyiceberg_go_testhooks.so; go test -tags pig_testhooks). In the
// release build Enabled is false, the hooks compile to nothing, and the
// __panic operation and every test.* session key are rejected as unknown.
package testhooks
