package jdbcdb

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
		{"jdbc:postgresql://bob:pw@db/shop", "", "", PostgreSQL, "postgres://bob:pw@db/shop"},
		{"jdbc:postgresql://bob@db/shop", "", "pw", PostgreSQL, "postgres://bob:pw@db/shop"},
		{"jdbc:postgresql://bob:pw@db/shop", "u", "", PostgreSQL, "postgres://u:pw@db/shop"},
		{"jdbc:mysql://bob:pw@db/test", "", "", MySQL, "bob:pw@tcp(db:3306)/test?parseTime=true"},
		{"jdbc:mysql://bob:pw@db/test", "u", "p", MySQL, "u:p@tcp(db:3306)/test?parseTime=true"},
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
}

// A driver's message loses the URL's passwords, escaped or not.
func TestHideSecrets(t *testing.T) {
	msg := HideSecrets("connecting to postgres://bob:p@ss w/ p@ss failed", "jdbc:postgresql://bob:p%40ss@h/d", "")
	if msg != "connecting to postgres://bob:[hidden] w/ [hidden] failed" {
		t.Errorf("HideSecrets = %s", msg)
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
