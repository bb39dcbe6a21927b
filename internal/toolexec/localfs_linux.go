package toolexec

import "syscall"

// localFileSystems are the statfs f_type magic numbers of the file
// systems on local disks or in memory (linux/magic.h), whose reads do not
// stall the way a network file system's (NFS, SMB, FUSE, 9P) can.
var localFileSystems = map[uint32]bool{
	0xEF53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0x858458F6: true, // ramfs
	0x794C7630: true, // overlayfs
	0x2FC12FC1: true, // zfs
	0xF2F52010: true, // f2fs
	0x73717368: true, // squashfs
	0x4D44:     true, // vfat, msdos
	0x2011BAB0: true, // exfat
	0x5346544E: true, // ntfs
	0x7366746E: true, // ntfs3
	0x3153464A: true, // jfs
	0x52654973: true, // reiserfs
}

// localFileSystem reports whether dir is on a local file system.
func localFileSystem(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return localFileSystems[uint32(st.Type)] // a 32-bit magic, whatever the field's type
}
