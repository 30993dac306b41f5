package load

import "golang.org/x/sys/unix"

// pseudoFilesystems are the kernel's file systems of generated entries:
// walking them reads no manifest and may not end (/proc/self, sysfs's
// links between devices).
var pseudoFilesystems = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "proc",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.BPF_FS_MAGIC:        "bpf",
	unix.PSTOREFS_MAGIC:      "pstore",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	unix.BINFMTFS_MAGIC:      "binfmt_misc",
	unix.SELINUX_MAGIC:       "selinuxfs",
	unix.HUGETLBFS_MAGIC:     "hugetlbfs",
	unix.NSFS_MAGIC:          "nsfs",
}

// pseudoFS names the pseudo-filesystem the directory real (a resolved
// path) is on, or "". devtmpfs reports tmpfs's magic, as /tmp does, so
// /dev is known by its place.
func pseudoFS(real string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(real, &st); err != nil {
		return pseudoByPath(real)
	}
	if name, ok := pseudoFilesystems[int64(st.Type)]; ok {
		return name
	}
	if st.Type == unix.TMPFS_MAGIC && pseudoByPath(real) == "devfs" {
		return "devtmpfs"
	}
	return ""
}
