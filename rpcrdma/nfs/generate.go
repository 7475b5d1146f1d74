package nfs

// The XDR walkers are generated from the .x files in xdr/ by
// internal/xdrgen; TestGeneratedUpToDate checks that the committed output
// is what the generator makes now.

//go:generate go run ./internal/xdrgen/cmd/xdrgen -pkg nfs -prefix v3 -o zz_nfs3.go xdr/nfs3.x
//go:generate go run ./internal/xdrgen/cmd/xdrgen -pkg nfs -prefix mnt -o zz_mount.go xdr/mount.x
//go:generate go run ./internal/xdrgen/cmd/xdrgen -pkg nfs -prefix v4 -roots nfs_argop4,nfs_resop4,nfs_cb_argop4,nfs_cb_resop4 -o zz_nfs4.go xdr/nfs4.x
