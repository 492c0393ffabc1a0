package javaregex

import (
	"strings"
	"testing"
)

func TestMatchesIsWholeString(t *testing.T) {
	p, err := Compile(`orders|items`)
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{"orders": true, "items": true, "orders2": false, "xitems": false} {
		if got := p.Matches(s); got != want {
			t.Errorf("Matches(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestReplaceWholeFollowsJavaReplacementRules(t *testing.T) {
	for _, c := range []struct{ regex, in, repl, want string }{
		{`(.*)\.public\.(.*)`, "db.public.orders", "$2", "orders"},
		{`(.*)\.public\.(.*)`, "db.public.orders", "$1_$2", "db_orders"},
		{`(?<db>.*)\.(?<t>.*)`, "shop.orders", "${t}-${db}", "orders-shop"},
		// Java reads $10 as group 1 then "0" when there is no group 10.
		{`(a)(b)`, "ab", "$10", "a0"},
		{`(.*)`, "x", `\$1 costs \\ $1`, `$1 costs \ x`},
		{`(a)|(b)`, "b", "[$1]", "[]"},
	} {
		p, err := Compile(c.regex)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := p.ReplaceWhole(c.in, c.repl)
		if err != nil || !ok || got != c.want {
			t.Errorf("%s on %q with %q = %q, %v, %v; want %q", c.regex, c.in, c.repl, got, ok, err, c.want)
		}
	}
}

func TestBadReplacementsAreErrors(t *testing.T) {
	p, _ := Compile(`(a)`)
	for _, repl := range []string{"$2", "x$", `x\`, "${nope}", "$x"} {
		if err := p.CheckReplacement(repl); err == nil {
			t.Errorf("replacement %q: no error", repl)
		}
	}
	if err := p.CheckReplacement("$1-$0"); err != nil {
		t.Errorf("valid replacement refused: %v", err)
	}
}

func TestJavaOnlySyntaxIsNamed(t *testing.T) {
	for expr, want := range map[string]string{
		`foo(?=bar)`: "lookahead", `(?<!x)y`: "lookbehind", `(a)\1`: "backreference",
		`a++`: "possessive", `a*+`: "possessive", `(?>ab)`: "atomic",
	} {
		_, err := Compile(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want an error naming %s", expr, err, want)
		}
	}
	for _, ok := range []string{`a+`, `a+?`, `[+*]+`, `\++`, `(?i)abc`, `(?<name>x)`} {
		if _, err := Compile(ok); err != nil {
			t.Errorf("Compile(%q): %v", ok, err)
		}
	}
}

func FuzzCompileAndReplace(f *testing.F) {
	f.Add(`(.*)\.(.*)`, "a.b", "$2_$1")
	f.Add(`[a-z]+`, "abc", `\$0`)
	f.Fuzz(func(t *testing.T, expr, in, repl string) {
		p, err := Compile(expr)
		if err != nil {
			return
		}
		if p.CheckReplacement(repl) == nil {
			if _, _, err := p.ReplaceWhole(in, repl); err != nil {
				t.Fatalf("a replacement that checked fails: %v", err)
			}
		}
	})
}

func TestReplaceFirst(t *testing.T) {
	for _, c := range []struct{ expr, in, repl, want string }{
		{`(.*)customers_shard(.*)`, "db.inventory.customers_shard1", "$1customers_all_shards", "db.inventory.customers_all_shards"},
		// matches() takes "ab", find() the first alternative: Java keeps the "b".
		{`a|ab`, "ab", "X", "Xb"},
		{`b`, "abc", "[$0]", "a[b]c"},
		{`z`, "abc", "X", "abc"},
	} {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.ReplaceFirst(c.in, c.repl)
		if err != nil || got != c.want {
			t.Errorf("%q.ReplaceFirst(%q, %q) = %q, %v; want %q", c.expr, c.in, c.repl, got, err, c.want)
		}
	}
}
