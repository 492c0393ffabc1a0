package jdbc

import "testing"

func TestParseURL(t *testing.T) {
	cases := []struct {
		url, user, pass string
		d               *Dialect
		dsn             string
	}{
		{"jdbc:postgresql://127.0.0.1:5432/test", "postgres", "", PostgreSQL, "postgres://postgres:@127.0.0.1:5432/test"},
		{"jdbc:postgresql://db/shop?user=a&password=b&sslmode=disable", "", "", PostgreSQL, "postgres://a:b@db/shop?sslmode=disable"},
		{"jdbc:mysql://127.0.0.1:3306/test", "root", "", MySQL, "root@tcp(127.0.0.1:3306)/test?parseTime=true"},
		{"jdbc:mariadb://db/test", "u", "p", MySQL, "u:p@tcp(db:3306)/test?parseTime=true"},
		{"jdbc:sqlite:/tmp/x.db", "", "", SQLite, "/tmp/x.db"},
	}
	for _, c := range cases {
		d, dsn, err := ParseURL(c.url, c.user, c.pass)
		if err != nil || d != c.d || dsn != c.dsn {
			t.Errorf("%s: %v %q %v; want %v %q", c.url, d, dsn, err, c.d.Name, c.dsn)
		}
	}
	for _, bad := range []string{"postgresql://x/y", "jdbc:oracle:thin:@x", "jdbc:postgresql:x", "jdbc:sqlite:"} {
		if _, _, err := ParseURL(bad, "", ""); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if got := redact("jdbc:postgresql://h/d?user=a&password=secret&x=1"); got != "jdbc:postgresql://h/d?user=a&password=[hidden]&x=1" {
		t.Errorf("redact = %s", got)
	}
}

func TestQuote(t *testing.T) {
	if got := PostgreSQL.QuoteTable(TableID{Schema: "orders", Table: `we"ird`}); got != `"orders"."we""ird"` {
		t.Errorf("postgres: %s", got)
	}
	if got := MySQL.QuoteTable(TableID{Catalog: "test", Table: "t`x"}); got != "`test`.`t``x`" {
		t.Errorf("mysql: %s", got)
	}
	if (TableID{Schema: "orders", Table: "orders"}).String() != "orders.orders" {
		t.Error("TableID.String")
	}
}
