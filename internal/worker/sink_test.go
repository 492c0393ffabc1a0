package worker

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A sink's consumer rides out what rejoining its group can get past, and
// fails on what it cannot.
func TestRejoinable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{kerr.UnknownMemberID, true},
		{kerr.IllegalGeneration, true},
		{kerr.CoordinatorNotAvailable, true},
		{fmt.Errorf("unable to dial: %w", refused), true},
		{kerr.GroupAuthorizationFailed, false},
		{kerr.InvalidGroupID, false},
		{fmt.Errorf("sasl: %w", kerr.SaslAuthenticationFailed), false},
		{&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, false},
		{fmt.Errorf("handshake: %w", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), false},
		{tls.AlertError(42), false},
	} {
		if got := rejoinable(c.err); got != c.want {
			t.Errorf("rejoinable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A sink that caught up commits at once at the end of a burst, whatever
// commit came shortly before it; only a trickle, caught up again soon
// after its last commit for catching up, waits for the spacing.
func TestCommitCaughtUp(t *testing.T) {
	for _, c := range []struct {
		name  string
		dirty int
		since time.Duration
		paced bool
		want  bool
	}{
		{"a burst's end, just after the task asked for a commit", 1469, time.Millisecond, false, true},
		{"a burst's end, just after the interval's commit", 1, time.Millisecond, false, true},
		{"a trickle, soon after its last commit", 1, time.Millisecond, true, false},
		{"a trickle, the spacing past", 1, caughtUpCommitSpacing, true, true},
		{"a poll's worth since the last catching up", pollMax, time.Millisecond, true, true},
	} {
		if got := commitCaughtUp(c.dirty, c.since, c.paced); got != c.want {
			t.Errorf("%s: commitCaughtUp(%d, %v, %v) = %v, want %v", c.name, c.dirty, c.since, c.paced, got, c.want)
		}
	}
}
