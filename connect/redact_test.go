package connect

import "testing"

// Every password a URL (a JDBC URL, say) can hold is hidden; more may be
// hidden than the password when the URL is ambiguous, never less.
func TestRedactURL(t *testing.T) {
	for url, want := range map[string]string{
		"jdbc:postgresql://h/d?user=a&password=secret&x=1":           "jdbc:postgresql://h/d?user=a&password=[hidden]&x=1",
		"jdbc:postgresql://h/d?password=a&PASSWORD=b;x=1":            "jdbc:postgresql://h/d?password=[hidden]&PASSWORD=[hidden];x=1",
		"jdbc:postgresql://bob:secret@h:5432/d?sslmode=disable":      "jdbc:postgresql://bob:[hidden]@h:5432/d?sslmode=disable",
		"jdbc:mysql://bob:se@c/ret@h/d":                              "jdbc:mysql://bob:[hidden]@h/d",
		"jdbc:mysql://bob@h/d":                                       "jdbc:mysql://bob@h/d",
		"jdbc:mysql://bob:secret@h/d?password=other":                 "jdbc:mysql://bob:[hidden]@h/d?password=[hidden]",
		"jdbc:mysql://h:3306/d?user=bob@corp":                        "jdbc:mysql://h:[hidden]@corp",
		"jdbc:mysql://address=(host=h)(password=secret)(user=bob)/d": "jdbc:mysql://address=(host=h)(password=[hidden]",
		"jdbc:oracle:thin:bob/secret@h:1521:orcl":                    "jdbc:oracle:thin:[hidden]@h:1521:orcl",
		"jdbc:postgresql://127.0.0.1:5432/test":                      "jdbc:postgresql://127.0.0.1:5432/test",
		"jdbc:sqlite:/tmp/x.db":                                      "jdbc:sqlite:/tmp/x.db",
	} {
		if got := RedactURL(url); got != want {
			t.Errorf("RedactURL(%s) = %s, want %s", url, got, want)
		}
	}
}
