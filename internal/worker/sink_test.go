package worker

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"syscall"
	"testing"

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
