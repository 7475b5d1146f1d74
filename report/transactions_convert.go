package report

// ConvertTransaction converts a transaction a plug-in handed out (RPC-
// over-RDMA's, as rpcordma.OnTransaction gives it) as `transactions
// --format json` shows it, through the ULP that registered its
// conversion; the zero Transaction when none did.
func ConvertTransaction(t any) Transaction {
	for i := range ulps {
		if f := ulps[i].ConvertTransaction; f != nil {
			if out, ok := f(t); ok {
				return out
			}
		}
	}
	return Transaction{}
}
