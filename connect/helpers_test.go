package connect

import "math/big"

func bigInt(i int64) *big.Int { return big.NewInt(i) }
