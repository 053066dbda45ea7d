"""A whole host's disks, located: every by-id name udev makes on an HBA box (libata, SAS,
NVMe with its namespace link, a USB bridge), by-path ports, an enclosure with an empty slot,
stray files among the links, and bay rules of every kind, matched first to last."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from collectors.location import BayRule, DiskLocation, bay_rules, parse_by_id_name, read_locations


@pytest.mark.parametrize("name, want", [
    ("scsi-0ATA_Samsung_SSD_850_S2R5NX0H123456", ("scsi", "Samsung SSD 850", "S2R5NX0H123456")),
    ("scsi-1ATA_ST4000DM000-1F2168_Z30A1B2C", ("scsi", "ST4000DM000-1F2168", "Z30A1B2C")),
    ("scsi-SSEAGATE_ST4000NM0023_Z1Z2ABCD0000C5301234", ("scsi", "SEAGATE ST4000NM0023", "Z1Z2ABCD0000C5301234")),
    ("scsi-SHGST_HUH721212AL5200_8DGZ1ABC", ("scsi", "HGST HUH721212AL5200", "8DGZ1ABC")),
    ("ata-SERIALONLY", ("ata", None, "SERIALONLY")),
    ("nvme-Samsung_SSD_970_EVO_Plus_1TB_S4EWNX0R123456_1", ("nvme", "Samsung SSD 970 EVO Plus 1TB S4EWNX0R123456",
                                                          "1")),
    ("usb-WD_My_Passport_25E2_575833314141-0:0", ("usb", "WD My Passport 25E2", "575833314141")),
])
def test_more_by_id_names_as_udev_makes_them(name: str, want: tuple[str, str | None, str | None]) -> None:
    got = parse_by_id_name(name)
    assert got is not None and (got.bus, got.model, got.serial) == want


@pytest.mark.parametrize("name", ["nodash", "ieee1394-0x0011", "scsi-35000c500a1b2c3d4-part2"])
def test_names_of_other_buses_and_partitions_are_not_disks(name: str) -> None:
    assert parse_by_id_name(name) is None


LINKS = {
    "by-id": {
        "ata-WDC_WD80EFZX-68UW8N0_VK1ABCDE": "sda",
        "ata-WDC_WD80EFZX-68UW8N0_VK1ABCDE-part1": "sda1",
        "scsi-SATA_WDC_WD80EFZX-68U_VK1ABCDE": "sda",
        "scsi-35000cca252c12345": "sda",
        "wwn-0x5000CCA252C12345": "sda",
        "scsi-SSEAGATE_ST4000NM0023_Z1Z2ABCD0000C5301234": "sdb",
        "scsi-35000c500a1b2c3d4": "sdb",
        "usb-JMicron_Generic_0123456789ABCDEF-0:0": "sdc",
        "scsi-SATA_WDC_WD40EFRX-68N_WD-WCC7K1234567": "sdc",
        "nvme-Samsung_SSD_970_EVO_Plus_1TB_S4EWNX0R123456": "nvme0n1",
        "nvme-Samsung_SSD_970_EVO_Plus_1TB_S4EWNX0R123456_1": "nvme0n1",
        "nvme-eui.0025385781b0a1b2": "nvme0n1",
        "md-uuid-3bd8a6f5:0c4a2a4b": "md0",
        "wwn-0x5000c500deadbeef": "sdd",
    },
    "by-path": {
        "pci-0000:03:00.0-sas-phy1-lun-0": "sda",
        "pci-0000:03:00.0-sas-phy1-lun-0-part1": "sda1",
        "pci-0000:03:00.0-sas-phy11-lun-0": "sdb",
        "pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0": "sdc",
        "pci-0000:01:00.0-nvme-1": "nvme0n1",
    },
}


def host(tmp_path: Path) -> Path:
    for folder, links in LINKS.items():
        d = tmp_path / "dev/disk" / folder
        d.mkdir(parents=True)
        (d / "0-not-a-link").write_text("a stray file\n")  # skipped, and the links after it still read
        for name, dev in links.items():
            os.symlink(f"../../{dev}", d / name)
        (d / "zz-not-a-link").write_text("another\n")
    enclosures = tmp_path / "sys/class/enclosure"
    enclosures.mkdir(parents=True)
    (enclosures / "0:0:10:0").write_text("not a folder")  # skipped, the next enclosure still read
    (enclosures / "0:0:12:0/Slot00").mkdir(parents=True)  # an empty slot: no device/block
    (enclosures / "0:0:12:0/Slot01/device/block/sdb").mkdir(parents=True)
    (enclosures / "0:0:12:0/Slot02/device/block/sdd").mkdir(parents=True)
    return tmp_path


RULES = [
    BayRule("front 1", serial="VK1ABCDE"),
    BayRule("by wwn", wwn="0x5000C500DEADBEEF"),
    BayRule("phy1 port", path="pci-0000:03:00.0-sas-phy1"),  # must not take phy11
    BayRule("shelf 2, slot 1", enclosure_slot="0:0:12:0/Slot01"),
    BayRule("usb dock", path="pci-0000:00:14.0-usb-0:2:1.0"),
]


def test_every_disk_gets_its_serial_ids_port_slot_and_bay(tmp_path: Path) -> None:
    got = read_locations(host(tmp_path), RULES)
    assert got == {
        "sda": DiskLocation("sda", "VK1ABCDE", "WDC WD80EFZX-68UW8N0", "0x5000cca252c12345",
                            "pci-0000:03:00.0-sas-phy1-lun-0", None, "front 1",
                            ["ata-WDC_WD80EFZX-68UW8N0_VK1ABCDE", "scsi-35000cca252c12345",
                             "scsi-SATA_WDC_WD80EFZX-68U_VK1ABCDE", "wwn-0x5000CCA252C12345"]),
        "sdb": DiskLocation("sdb", "Z1Z2ABCD0000C5301234", "SEAGATE ST4000NM0023", "0x5000c500a1b2c3d4",
                            "pci-0000:03:00.0-sas-phy11-lun-0", "0:0:12:0/Slot01", "shelf 2, slot 1",
                            ["scsi-35000c500a1b2c3d4", "scsi-SSEAGATE_ST4000NM0023_Z1Z2ABCD0000C5301234"]),
        "sdc": DiskLocation("sdc", "WD-WCC7K1234567", "WDC WD40EFRX-68N", None,
                            "pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0", None, "usb dock",
                            ["scsi-SATA_WDC_WD40EFRX-68N_WD-WCC7K1234567", "usb-JMicron_Generic_0123456789ABCDEF-0:0"]),
        "nvme0n1": DiskLocation("nvme0n1", "S4EWNX0R123456", "Samsung SSD 970 EVO Plus 1TB", None,
                                "pci-0000:01:00.0-nvme-1", None, None,
                                ["nvme-Samsung_SSD_970_EVO_Plus_1TB_S4EWNX0R123456",
                                 "nvme-Samsung_SSD_970_EVO_Plus_1TB_S4EWNX0R123456_1"]),
        "sdd": DiskLocation("sdd", None, None, "0x5000c500deadbeef", None, "0:0:12:0/Slot02",
                            "by wwn", ["wwn-0x5000c500deadbeef"]),
    }


@pytest.mark.parametrize("rule, loc, matches", [
    (BayRule("x", serial="A"), DiskLocation("sda", serial="B"), False),
    (BayRule("x", serial="A"), DiskLocation("sda"), False),
    (BayRule("x", path="p"), DiskLocation("sda"), False),  # no serial on either side is no match
    (BayRule("x", wwn="0xAB"), DiskLocation("sda", wwn="0xab"), True),
    (BayRule("x", wwn="0xAB"), DiskLocation("sda"), False),
    (BayRule("x", path="pci-1-sas-phy1"), DiskLocation("sda", by_path="pci-1-sas-phy1"), True),
    (BayRule("x", path="pci-1-sas-phy1"), DiskLocation("sda", by_path="pci-1-sas-phy1-lun-0"), True),
    (BayRule("x", path="pci-1-sas-phy1"), DiskLocation("sda", by_path="pci-1-sas-phy12"), False),
    (BayRule("x", enclosure_slot="e/Slot01"), DiskLocation("sda", enclosure_slot="e/Slot01"), True),
    (BayRule("x", enclosure_slot="e/Slot01"), DiskLocation("sda", enclosure_slot="e/Slot02"), False),
    (BayRule("x", enclosure_slot="e/Slot01"), DiskLocation("sda"), False),
    (BayRule("x"), DiskLocation("sda"), False),
])
def test_a_bay_rule_matches_only_on_what_it_names(rule: BayRule, loc: DiskLocation, matches: bool) -> None:
    assert rule.matches(loc) is matches


def test_bay_rules_come_from_the_config_tables() -> None:
    assert bay_rules([{"label": "bay 7", "serial": "ZA1049HK"}, {"label": "bay 8", "path": "pci-1"}]) == [
        BayRule("bay 7", serial="ZA1049HK"), BayRule("bay 8", path="pci-1")]
