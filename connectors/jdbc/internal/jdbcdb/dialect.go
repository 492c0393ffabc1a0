package jdbcdb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/secrets"
	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Dialect is what differs between databases: how to reach them and how to
// write their SQL.
type Dialect struct {
	// Name is Confluent's dialect name: PostgreSqlDatabaseDialect,
	// MySqlDatabaseDialect or SqliteDatabaseDialect.
	Name string
	// Driver is the database/sql driver name.
	Driver string
	// quote is the identifier quote character.
	quote string
}

// The supported dialects.
var (
	PostgreSQL = &Dialect{Name: "PostgreSqlDatabaseDialect", Driver: "pgx", quote: `"`}
	MySQL      = &Dialect{Name: "MySqlDatabaseDialect", Driver: "mysql", quote: "`"}
	SQLite     = &Dialect{Name: "SqliteDatabaseDialect", Driver: "sqlite", quote: `"`}
)

// QuoteChar is the character that quotes identifiers.
func (d *Dialect) QuoteChar() byte { return d.quote[0] }

// Quote quotes an identifier, doubling the quote character inside it.
func (d *Dialect) Quote(ident string) string {
	return d.quote + strings.ReplaceAll(ident, d.quote, d.quote+d.quote) + d.quote
}

// QuoteTable quotes a possibly qualified table name (catalog.schema.table
// parts are quoted one by one).
func (d *Dialect) QuoteTable(id TableID) string {
	var parts []string
	for _, p := range []string{id.Catalog, id.Schema, id.Table} {
		if p != "" {
			parts = append(parts, d.Quote(p))
		}
	}
	return strings.Join(parts, ".")
}

// Placeholder returns the bind marker for the n-th (1-based) argument.
func (d *Dialect) Placeholder(n int) string {
	if d == PostgreSQL {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}

// TableID names a table; Catalog and Schema may be empty.
type TableID struct {
	Catalog, Schema, Table string
}

// String renders the id as Confluent's TableId.toString does without
// quotes: the parts that are set, joined by dots ("orders.orders" for
// schema orders, table orders). Source partitions carry this text.
func (t TableID) String() string {
	var parts []string
	for _, p := range []string{t.Catalog, t.Schema, t.Table} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// ParseURL reads a JDBC URL and returns the dialect and the Go driver's
// data source name. user and password, when not empty, override any in
// the URL, as connection.user and connection.password do in Confluent's
// connector.
func ParseURL(jdbcURL, user, password string) (*Dialect, string, error) {
	rest, ok := strings.CutPrefix(jdbcURL, "jdbc:")
	if !ok {
		return nil, "", fmt.Errorf("Invalid JDBC URL %q: it must start with jdbc:", connect.RedactURL(jdbcURL))
	}
	sub, _, _ := strings.Cut(rest, ":")
	switch strings.ToLower(sub) {
	case "postgresql":
		dsn, err := postgresDSN(strings.TrimPrefix(rest, sub+":"), user, password)
		return PostgreSQL, dsn, err
	case "mysql", "mariadb":
		dsn, err := mysqlDSN(strings.TrimPrefix(rest, sub+":"), user, password)
		return MySQL, dsn, err
	case "sqlite":
		path := strings.TrimPrefix(rest, sub+":")
		if path == "" {
			return nil, "", fmt.Errorf("Invalid JDBC URL %q: no database file", connect.RedactURL(jdbcURL))
		}
		return SQLite, path, nil
	}
	return nil, "", fmt.Errorf("Unsupported JDBC URL %q: connectd supports jdbc:postgresql:, jdbc:mysql:, jdbc:mariadb: and jdbc:sqlite:", connect.RedactURL(jdbcURL))
}

// postgresDSN turns //host:port/db?k=v into a pgx URL. JDBC's user and
// password query parameters are honoured; other parameters pass through
// when libpq knows them (sslmode, ...).
func postgresDSN(rest, user, password string) (string, error) {
	u, err := url.Parse("postgres:" + rest)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("Invalid JDBC URL for PostgreSQL: expected jdbc:postgresql://host[:port]/database")
	}
	q := u.Query()
	if v := q.Get("user"); v != "" && user == "" {
		user = v
	}
	if v := q.Get("password"); v != "" && password == "" {
		password = v
	}
	if u.User != nil {
		if user == "" {
			user = u.User.Username()
		}
		if v, ok := u.User.Password(); ok && password == "" {
			password = v
		}
	}
	q.Del("user")
	q.Del("password")
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// mysqlDSN turns //host:port/db?k=v into go-sql-driver's DSN.
func mysqlDSN(rest, user, password string) (string, error) {
	u, err := url.Parse("mysql:" + rest)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("Invalid JDBC URL for MySQL: expected jdbc:mysql://host[:port]/database")
	}
	q := u.Query()
	if v := q.Get("user"); v != "" && user == "" {
		user = v
	}
	if v := q.Get("password"); v != "" && password == "" {
		password = v
	}
	// Connector/J also takes the credentials from the user info
	// (jdbc:mysql://user:password@host/db), after the parameters.
	if u.User != nil {
		if user == "" {
			user = u.User.Username()
		}
		if v, ok := u.User.Password(); ok && password == "" {
			password = v
		}
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if !strings.Contains(u.Host, ":") {
		cfg.Addr += ":3306"
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	// Timestamps come back as time.Time in UTC, as JDBC hands them.
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	return cfg.FormatDSN(), nil
}

// HideSecrets hides in a message, a driver's error say, the JDBC URL's
// passwords, escaped as written and unescaped as a driver may repeat
// them, and the password given apart (connection.password).
func HideSecrets(msg, jdbcURL, password string) string {
	msg = strings.ReplaceAll(msg, jdbcURL, connect.RedactURL(jdbcURL))
	hide := []string{password}
	for _, v := range connect.URLSecrets(jdbcURL) {
		hide = append(hide, v)
		if u, err := url.QueryUnescape(v); err == nil {
			hide = append(hide, u)
		}
	}
	return secrets.New(hide...).Hide(msg)
}

// Open connects to the database a JDBC URL names and checks that it
// answers.
func Open(ctx context.Context, jdbcURL, user, password string) (*sql.DB, *Dialect, error) {
	d, dsn, err := ParseURL(jdbcURL, user, password)
	if err != nil {
		return nil, nil, err
	}
	db, err := sql.Open(d.Driver, dsn)
	if err != nil {
		return nil, nil, err
	}
	if d == SQLite {
		// One writer at a time: SQLite serializes writes anyway, and a
		// single connection avoids "database is locked" between our own.
		db.SetMaxOpenConns(1)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("Cannot connect to %s: %s", connect.RedactURL(jdbcURL), HideSecrets(err.Error(), jdbcURL, password))
	}
	return db, d, nil
}
