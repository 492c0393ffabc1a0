package connectvalues

import (
	"math/big"
	"testing"
)

func TestBigDecimalString(t *testing.T) {
	// Expected texts are java.math.BigDecimal.toString output.
	cases := []struct {
		unscaled string
		scale    int32
		want     string
	}{
		{"1250", 2, "12.50"}, {"-5", 2, "-0.05"}, {"0", 2, "0.00"}, {"123", 0, "123"},
		{"1", -2, "1E+2"}, {"5", 10, "5E-10"}, {"0", 7, "0E-7"}, {"1", 6, "0.000001"},
		{"1", 7, "1E-7"}, {"-123", 10, "-1.23E-8"}, {"123456", 3, "123.456"}, {"0", -3, "0E+3"},
		{"12345678901234567890123", 5, "123456789012345678.90123"},
	}
	for _, tc := range cases {
		i, _ := new(big.Int).SetString(tc.unscaled, 10)
		if got := BigDecimalString(i, tc.scale); got != tc.want {
			t.Errorf("BigDecimalString(%s, %d) = %s, want %s", tc.unscaled, tc.scale, got, tc.want)
		}
	}
}
