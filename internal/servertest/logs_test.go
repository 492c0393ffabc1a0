package servertest

import "testing"

func TestWithoutPollsKeepsAllButSuccessfulGETs(t *testing.T) {
	log := `time=1 level=INFO msg=request method=GET uri=/connectors/src/status status=200 bytes=103
time=2 level=INFO msg="assignment received" generation=5
time=3 level=INFO msg=request method=GET uri=/connectors/x/status status=404 bytes=54
time=4 level=INFO msg=request method=PUT uri=/connectors/src/stop status=204 bytes=0
time=5 level=WARN msg="submitting task configs failed" connector=src
time=6 level=INFO msg=request method=GET uri=/health status=200 bytes=94
`
	want := `time=2 level=INFO msg="assignment received" generation=5
time=3 level=INFO msg=request method=GET uri=/connectors/x/status status=404 bytes=54
time=4 level=INFO msg=request method=PUT uri=/connectors/src/stop status=204 bytes=0
time=5 level=WARN msg="submitting task configs failed" connector=src
`
	if got := withoutPolls(log); got != want {
		t.Errorf("withoutPolls:\n%s\nwant:\n%s", got, want)
	}
	if got := tail("abcdef", 4); got != "cdef" {
		t.Errorf("tail = %q", got)
	}
}
