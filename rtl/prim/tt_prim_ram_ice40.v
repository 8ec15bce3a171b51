`default_nettype none
// tt_prim_ram_ice40: tt_prim_ram on Lattice iCE40 SB_RAM40_4K block RAMs (the ports and behaviour are
// tt_prim_ram's). One SB_RAM40_4K holds 4,096 bits as 256 x 16, 512 x 8, 1024 x 4 or 2048 x 2 (READ_MODE =
// WRITE_MODE 0..3; a narrow shape uses every 2nd, 4th or 8th data pin from pin 0, 1 or 3). The memory takes the widest shape whose depth
// holds DEPTH words (2048 x 2 for deeper memories, which are then several block RAMs deep, the read selected by the
// registered upper address bits) and as many side by side as WIDTH needs. The block RAM has no output register:
// OUT_REG = 1 is a fabric register.
module tt_prim_ram_ice40 #(
  parameter integer WIDTH   = 16,
  parameter integer DEPTH   = 256,
  parameter integer AW      = 8,
  parameter integer OUT_REG = 0
) (
  input  wire             clk,
  input  wire             wr_en,
  input  wire [AW-1:0]    wr_addr,
  input  wire [WIDTH-1:0] wr_data,
  input  wire             rd_en,
  input  wire [AW-1:0]    rd_addr,
  output wire [WIDTH-1:0] rd_data
);

  localparam integer MODE   = (DEPTH <= 256) ? 0 : (DEPTH <= 512) ? 1 : (DEPTH <= 1024) ? 2 : 3;
  localparam integer MODE_W = 16 >> MODE;    // data bits of the shape
  localparam integer MW     = 8 + MODE;      // word address bits of the shape
  localparam integer STEP   = 1 << MODE;     // the shape's data pins: every STEP-th, from pin STEP / 2
  localparam integer COLS   = (WIDTH + MODE_W - 1) / MODE_W;
  localparam integer ROWS   = (DEPTH + (1 << MW) - 1) >> MW;  // block RAMs deep
  localparam integer IW     = (DEPTH > 1) ? $clog2(DEPTH) : 1;
  localparam integer RW     = (ROWS > 1) ? $clog2(ROWS) : 1;  // row select bits

  wire unused_addr = ^{wr_addr, rd_addr};
  wire [MW+RW-1:0] wa;
  wire [MW+RW-1:0] ra;
  wire [COLS*MODE_W-1:0] wdata;
  generate
    if (MW + RW > IW) begin : g_pad
      assign wa = {{(MW+RW-IW){1'b0}}, wr_addr[IW-1:0]};
      assign ra = {{(MW+RW-IW){1'b0}}, rd_addr[IW-1:0]};
    end else begin : g_full
      assign wa = wr_addr[MW+RW-1:0];
      assign ra = rd_addr[MW+RW-1:0];
    end
    if (COLS * MODE_W > WIDTH) begin : g_wpad
      assign wdata = {{(COLS*MODE_W-WIDTH){1'b0}}, wr_data};
    end else begin : g_wfull
      assign wdata = wr_data;
    end
  endgenerate
  wire [RW-1:0] wa_row = (ROWS > 1) ? wa[MW+RW-1:MW] : {RW{1'b0}};
  wire [RW-1:0] ra_row = (ROWS > 1) ? ra[MW+RW-1:MW] : {RW{1'b0}};
  wire [10:0]   waddr = {{(11-MW){1'b0}}, wa[MW-1:0]};
  wire [10:0]   raddr = {{(11-MW){1'b0}}, ra[MW-1:0]};

  // The row of the last read, for the read's multiplexer.
  reg [RW-1:0] row_q;
  always @(posedge clk) begin
    if (rd_en) begin
      row_q <= ra_row;
    end
  end
  wire [ROWS*COLS*MODE_W-1:0] tiles;  // every block RAM's read data, row r column c at [MODE_W*(COLS*r + c)]

  genvar r;
  genvar c;
  genvar k;
  generate
    for (r = 0; r < ROWS; r = r + 1) begin : g_row
      for (c = 0; c < COLS; c = c + 1) begin : g_col
        wire [15:0] wd;
        wire [15:0] rd;
        for (k = 0; k < 16; k = k + 1) begin : g_pin
          if (k % STEP == ((STEP > 1) ? STEP / 2 - 1 : 0)) begin : g_data
            assign wd[k] = wdata[MODE_W*c + k / STEP];
            assign tiles[MODE_W*(COLS*r + c) + k / STEP] = rd[k];
          end else begin : g_idle
            assign wd[k] = 1'b0;
          end
        end
        wire unused_rd = ^rd;
        SB_RAM40_4K #(
          .READ_MODE  (MODE),
          .WRITE_MODE (MODE)
        ) u_bram (
          .RDATA (rd),
          .RCLK  (clk),
          .RCLKE (rd_en && ra_row == r[RW-1:0]),
          .RE    (1'b1),
          .RADDR (raddr),
          .WCLK  (clk),
          .WCLKE (wr_en && wa_row == r[RW-1:0]),
          .WE    (1'b1),
          .WADDR (waddr),
          .MASK  (16'h0000),
          .WDATA (wd)
        );
      end
    end
  endgenerate

  wire [COLS*MODE_W-1:0] row_data = tiles[COLS*MODE_W*row_q +: COLS*MODE_W];
  wire unused_row_data = ^row_data;
  generate
    if (OUT_REG != 0) begin : g_out_reg
      reg [WIDTH-1:0] out_q;
      always @(posedge clk) begin
        out_q <= row_data[WIDTH-1:0];
      end
      assign rd_data = out_q;
    end else begin : g_direct
      assign rd_data = row_data[WIDTH-1:0];
    end
  endgenerate

endmodule
`default_nettype wire
