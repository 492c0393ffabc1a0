package converters

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/connectd/connectd/internal/javajson"
)

// This file reproduces the Java number semantics the converters depend on:
// how Jackson narrows a JSON number to the type a schema asks for, and how
// java.math.BigDecimal and BigInteger read and print themselves.

// splitNumber cuts a JSON number literal into its sign, integer digits,
// fraction digits and exponent digits (with sign).
func splitNumber(lit string) (neg bool, intPart, frac, exp string) {
	if strings.HasPrefix(lit, "-") {
		neg = true
		lit = lit[1:]
	}
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		lit, exp = lit[:i], lit[i+1:]
	}
	intPart, frac, _ = strings.Cut(lit, ".")
	return neg, intPart, frac, exp
}

// decimalScale is the scale java.math.BigDecimal(String) gives the
// literal: the number of fraction digits less the exponent. Java refuses a
// literal whose scale does not fit an int; Jackson then refuses the
// document.
func decimalScale(lit string) (int32, error) {
	_, _, frac, exp := splitNumber(lit)
	var e int64
	if exp != "" {
		sign := int64(1)
		switch exp[0] {
		case '-':
			sign = -1
			exp = exp[1:]
		case '+':
			exp = exp[1:]
		}
		exp = strings.TrimLeft(exp, "0")
		if len(exp) > 10 {
			return 0, errors.New("number exponent is out of range")
		}
		if exp != "" {
			v, _ := strconv.ParseInt(exp, 10, 64)
			e = sign * v
		}
	}
	scale := int64(len(frac)) - e
	if scale < math.MinInt32 || scale > math.MaxInt32 {
		return 0, errors.New("number exponent is out of range")
	}
	return int32(scale), nil
}

// parseDecimal reads a JSON number literal as new BigDecimal(literal). An
// integral literal has scale 0, as BigDecimal.valueOf(long) gives.
func parseDecimal(lit string) (*big.Int, int32, error) {
	scale, err := decimalScale(lit)
	if err != nil {
		return nil, 0, err
	}
	neg, intPart, frac, _ := splitNumber(lit)
	unscaled, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return nil, 0, errors.New("malformed number " + lit)
	}
	if neg {
		unscaled.Neg(unscaled)
	}
	return unscaled, scale, nil
}

var (
	two64  = new(big.Int).Lsh(big.NewInt(1), 64)
	mask64 = new(big.Int).Sub(two64, big.NewInt(1))
)

// javaLong is Jackson's JsonNode.longValue() for a number node: the integer
// part (fractions truncated toward zero) reduced to its low 64 bits, so an
// out-of-range value wraps as Java's narrowing does. intValue(), and the
// (byte) and (short) casts Kafka applies to it, keep fewer low bits of the
// same result, so callers narrow this with a Go conversion.
func javaLong(n *node) int64 {
	if n.integral {
		if v, err := strconv.ParseInt(n.text, 10, 64); err == nil {
			return v
		}
		i, _ := new(big.Int).SetString(n.text, 10)
		return low64(i)
	}
	unscaled, scale, err := parseDecimal(n.text)
	if err != nil {
		return 0 // the parser has already refused such literals
	}
	switch {
	case scale <= 0:
		// 10^64 is a multiple of 2^64: the low bits are all zero.
		if -int64(scale) >= 64 {
			return 0
		}
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)
		return low64(unscaled.Mul(unscaled, p))
	case int64(scale) > int64(len(unscaled.String())):
		return 0
	default:
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
		return low64(unscaled.Quo(unscaled, p))
	}
}

func low64(i *big.Int) int64 {
	return int64(new(big.Int).And(i, mask64).Uint64())
}

// javaDouble is Jackson's doubleValue() for a number node: the nearest
// double, infinite when out of range. A BigDecimal has no negative zero,
// so a zero literal such as -0.0 reads as +0.0.
func javaDouble(n *node) float64 {
	return float64(javaFloatBits(n, 64))
}

// javaFloat is Jackson's floatValue() for a number node.
func javaFloat(n *node) float32 {
	return float32(javaFloatBits(n, 32))
}

func javaFloatBits(n *node, bits int) float64 {
	if n.integral {
		i, _ := new(big.Int).SetString(n.text, 10)
		f := new(big.Float).SetInt(i)
		if bits == 32 {
			v, _ := f.Float32()
			return float64(v)
		}
		v, _ := f.Float64()
		return v
	}
	// ParseFloat rounds correctly, as BigDecimal.doubleValue/floatValue do,
	// and gives ±Inf or ±0 with ErrRange outside the range.
	v, _ := strconv.ParseFloat(n.text, bits)
	if v == 0 {
		return 0
	}
	return v
}

// twosComplement is BigInteger.toByteArray(): the shortest big-endian
// two's-complement encoding, at least one byte long.
func twosComplement(i *big.Int) []byte {
	if i.Sign() >= 0 {
		b := i.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -i-1 has the complemented bits of i.
	m := new(big.Int).Neg(i)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for k := range b {
		b[k] = ^b[k]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xFF}, b...)
	}
	return b
}

// fromTwosComplement is new BigInteger(byte[]), which refuses an empty
// array.
func fromTwosComplement(b []byte) (*big.Int, error) {
	if len(b) == 0 {
		return nil, errors.New("Zero length BigInteger")
	}
	i := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		i.Sub(i, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return i, nil
}

// javaDoubleString is Double.toString(f).
func javaDoubleString(f float64) string {
	return string(javajson.AppendDoubleString(nil, f))
}

// javaFloatString is Float.toString(f).
func javaFloatString(f float32) string {
	return string(javajson.AppendFloatString(nil, f))
}
