package rest

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/logging"
)

// statuses answers the connector list and statuses of n connectors of one
// task each, for GET /connectors?expand=status.
type statuses struct {
	Herder
	names []string
}

func (s *statuses) Connectors(context.Context) ([]string, error) { return s.names, nil }

func (s *statuses) ConnectorStatus(_ context.Context, name string) (*client.ConnectorStatus, error) {
	return &client.ConnectorStatus{Name: name, Type: client.TypeSource,
		Connector: client.State{State: "RUNNING", WorkerID: "10.0.0.1:8083"},
		Tasks:     []client.TaskState{{ID: 0, State: "RUNNING", WorkerID: "10.0.0.2:8083"}}}, nil
}

// The REST layer's own cost of GET /connectors?expand=status at 3,000
// connectors (the herder's lookups are the stub's).
func BenchmarkExpandStatus3000(b *testing.B) {
	h := &statuses{}
	for i := range 3000 {
		h.names = append(h.names, fmt.Sprintf("source-%04d", i))
	}
	handler := New(h, logging.NewRegistry(io.Discard), DefaultOptions())
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest("GET", "/connectors?expand=status", nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}
