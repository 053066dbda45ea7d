"""Physical location: by-id names, by-path ports, enclosure slots and bay labels."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from collectors.location import BayRule, base_device, parse_by_id_name, read_locations


@pytest.mark.parametrize(
    ("name", "bus", "model", "serial", "wwn"),
    [
        ("ata-ST4000DM000-1F2168_Z30A1B2C", "ata", "ST4000DM000-1F2168", "Z30A1B2C", None),
        ("ata-WDC_WD80EFZZ-68BTXN0_WD-CA1B2C3D", "ata", "WDC WD80EFZZ-68BTXN0", "WD-CA1B2C3D", None),
        ("scsi-SATA_ST4000DM000-1F21_Z30A1B2C", "scsi", "ST4000DM000-1F21", "Z30A1B2C", None),
        ("nvme-Samsung_SSD_980_PRO_1TB_S5GXNF0R123456", "nvme", "Samsung SSD 980 PRO 1TB", "S5GXNF0R123456", None),
        ("usb-JMicron_Generic_0123456789ABCDEF-0:0", "usb", "JMicron Generic", "0123456789ABCDEF", None),
        ("wwn-0x5000c500a1b2c3d4", "wwn", None, None, "0x5000c500a1b2c3d4"),
        ("scsi-35000c500a1b2c3d4", "scsi", None, None, "0x5000c500a1b2c3d4"),
    ],
)
def test_by_id_names_split_into_model_and_serial(name: str, bus: str, model: str | None, serial: str | None,
                                                 wwn: str | None) -> None:
    got = parse_by_id_name(name)
    assert got is not None
    assert (got.bus, got.model, got.serial, got.wwn) == (bus, model, serial, wwn)


@pytest.mark.parametrize("name", ["ata-ST4000DM000-1F2168_Z30A1B2C-part1", "dm-name-root", "md-uuid-abc",
                                  "nvme-eui.0025385b71b0a1b2", "lvm-pv-uuid-x"])
def test_partitions_and_non_disks_are_ignored(name: str) -> None:
    assert parse_by_id_name(name) is None


@pytest.mark.parametrize(("part", "disk"), [("sda1", "sda"), ("sdaa12", "sdaa"), ("nvme0n1p2", "nvme0n1"),
                                            ("nvme0n1", "nvme0n1"), ("/dev/sdh", "sdh"), ("dm-3", "dm-3"),
                                            ("mmcblk0p1", "mmcblk0")])
def test_partition_names_map_to_their_disk(part: str, disk: str) -> None:
    assert base_device(part) == disk


def _host(tmp_path: Path) -> Path:
    by_id = tmp_path / "dev/disk/by-id"
    by_path = tmp_path / "dev/disk/by-path"
    by_id.mkdir(parents=True)
    by_path.mkdir(parents=True)
    links = {
        by_id / "ata-ST4000DM000-1F2168_Z30A1B2C": "../../sdh",
        by_id / "ata-ST4000DM000-1F2168_Z30A1B2C-part1": "../../sdh1",
        by_id / "wwn-0x5000c500a1b2c3d4": "../../sdh",
        by_id / "usb-JMicron_Generic_DEADBEEF0001-0:0": "../../sdi",
        by_path / "pci-0000:03:00.0-sas-phy7-lun-0": "../../sdh",
        by_path / "pci-0000:03:00.0-sas-phy7-lun-0-part1": "../../sdh1",
        by_path / "pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0": "../../sdi",
    }
    for link, target in links.items():
        os.symlink(target, link)
    slot = tmp_path / "sys/class/enclosure/0:0:12:0/Slot07/device/block/sdh"
    slot.mkdir(parents=True)
    return tmp_path


def test_a_disk_is_found_by_serial_wwn_port_and_enclosure_slot(tmp_path: Path) -> None:
    locs = read_locations(_host(tmp_path), [BayRule(label="shelf 2, bay 7", serial="Z30A1B2C")])
    sdh = locs["sdh"]
    assert (sdh.serial, sdh.model, sdh.wwn) == ("Z30A1B2C", "ST4000DM000-1F2168", "0x5000c500a1b2c3d4")
    assert sdh.by_path == "pci-0000:03:00.0-sas-phy7-lun-0"
    assert sdh.enclosure_slot == "0:0:12:0/Slot07"
    assert sdh.bay == "shelf 2, bay 7"


@pytest.mark.parametrize(
    "rule",
    [BayRule(label="B7", path="pci-0000:03:00.0-sas-phy7-lun-0"), BayRule(label="B7", wwn="0X5000C500A1B2C3D4"),
     BayRule(label="B7", enclosure_slot="0:0:12:0/Slot07")],
)
def test_bays_can_be_mapped_by_port_wwn_or_enclosure_slot(tmp_path: Path, rule: BayRule) -> None:
    assert read_locations(_host(tmp_path), [rule])["sdh"].bay == "B7"


def test_a_usb_dock_disk_keeps_its_port_even_with_a_bridge_serial(tmp_path: Path) -> None:
    sdi = read_locations(_host(tmp_path))["sdi"]
    assert sdi.by_path == "pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0"
    assert sdi.bay is None


def test_a_host_without_dev_disk_gives_no_locations(tmp_path: Path) -> None:
    assert read_locations(tmp_path) == {}
