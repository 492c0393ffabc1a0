package herder

import (
	"runtime"
	"sync"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/worker"
)

// A task's first report races StartTask's return, which records it as
// the id's current task: whichever comes first, the report is the
// current task's and must be written. Each round runs the two at once.
func TestStartingTaskReportRacesStartReturn(t *testing.T) {
	id := client.TaskID{Connector: "c", Task: 0}
	for round := range 20000 {
		var h Distributed
		task := new(worker.Task)
		h.incarnations.Store(id, startingTask)
		var wg sync.WaitGroup
		var reported bool
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			reported = h.current(id, task)
		})
		wg.Go(func() {
			<-start
			runtime.Gosched()
			h.incarnations.Store(id, task)
		})
		close(start)
		wg.Wait()
		if !reported {
			t.Fatalf("round %d: the report of the task being started was dropped", round)
		}
	}
}

func TestCurrentIncarnation(t *testing.T) {
	id := client.TaskID{Connector: "c", Task: 0}
	task, other := new(worker.Task), new(worker.Task)
	var h Distributed
	if !h.current(id, task) {
		t.Error("a task with no incarnation recorded was not current")
	}
	h.incarnations.Store(id, startingTask)
	if !h.current(id, task) {
		t.Error("the task being started was not current")
	}
	if cur, _ := h.incarnations.Load(id); cur != task {
		t.Error("the task being started did not take its place")
	}
	if h.current(id, other) {
		t.Error("a replaced task was current")
	}
}
