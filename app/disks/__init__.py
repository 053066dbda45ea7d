"""The disks' app-side pieces: bay labels saved from disk pages, notes per disk, the steps of
replacing a failed disk, the every-disk table. The plug-ins (collectors/disks) read and judge the
disks; this room keeps what people add to them. It imports storage and the core, never app.web."""
