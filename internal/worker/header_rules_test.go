package worker

import (
	"fmt"
	"testing"
)

// Header rules as Kafka's validator and Jetty's HeaderFilter read them:
// quoted rules keep their commas, actions in any case.
func TestParseHeaderRules(t *testing.T) {
	got, err := ParseHeaderRules(`set X-Frame-Options:DENY, "add Cache-Control: no-cache, no-store" ,SETDATE Expires:3600000`)
	if err != nil {
		t.Fatal(err)
	}
	want := "[{set X-Frame-Options DENY} {add Cache-Control no-cache, no-store} {setDate Expires 3600000}]"
	if fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

// FuzzParseHeaderRules: any value is rules or an error naming the key,
// never a panic; a rule's name has no blank.
func FuzzParseHeaderRules(f *testing.F) {
	f.Add(`set X-Frame-Options:DENY,"add A: b, c"`)
	f.Add(`addDate Expires:1,setDate Last-Modified:-5`)
	f.Add(`"set A:B`)
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseHeaderRules(s)
		if err != nil {
			return
		}
		for _, r := range rules {
			if r.Name == "" {
				t.Fatalf("%q: a rule without a name: %+v", s, r)
			}
		}
	})
}
