package worker

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A transaction that fails because a newer producer of the task's
// transactional id fenced this one out says so, whichever error the
// broker found it with: Kafka's PRODUCER_FENCED, or the INVALID_TXN_STATE
// a broker with KIP-890's transactions answers an EndTxn whose
// transaction its fencing aborted. Other errors are not taken for it.
func TestTxnErrorNamesFencing(t *testing.T) {
	s := &sourceTask{Task: &Task{Connector: "src", ID: 0}, txn: &txnState{eos: &ExactlyOnce{TransactionalID: "connect-cluster-src-0"}}}
	for _, c := range []struct {
		err    error
		fenced bool
	}{
		{kerr.ProducerFenced, true},
		{fmt.Errorf("ending: %w", kerr.InvalidTxnState), true},
		{kerr.InvalidProducerEpoch, false},
		{errors.New("connection reset"), false},
	} {
		msg := s.txnError("committing the transaction", c.err).Error()
		if got := strings.Contains(msg, "connect-cluster-src-0 was fenced out by a newer one"); got != c.fenced {
			t.Errorf("%v: %q names fencing %v, want %v", c.err, msg, got, c.fenced)
		}
		if !strings.Contains(msg, c.err.Error()) {
			t.Errorf("%v: %q hides the cause", c.err, msg)
		}
	}
}
